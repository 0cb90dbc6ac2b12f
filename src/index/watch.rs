//! Live updates: inotify, debounce, git-operation hold.
