//! Neutralisation of prompt-injection phrases and chat-template markers in indexed docs.
