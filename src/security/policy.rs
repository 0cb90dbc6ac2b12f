//! Stop rules: optional refusals for questions about guarded paths.
//!
//! A workspace may mark paths or names (`proto`, `deploy/k8s`) as guarded. Depending on the
//! [`GovernanceMode`], a tool call whose subject touches one is allowed, logged, or refused with
//! a structured payload telling the agent to stop and hand over to a person.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How stop rules are applied to read-only tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GovernanceMode {
    /// Never refuse (the default: every shipped tool only reads).
    #[default]
    AllowAll,
    /// Log a warning on a match and answer anyway.
    AuditWarn,
    /// Refuse a matching call with a [`Refusal`].
    EnforceRefusal,
}

impl GovernanceMode {
    /// The configuration spelling (`allow_all`, `audit_warn`, `enforce_refusal`).
    pub fn as_str(self) -> &'static str {
        match self {
            GovernanceMode::AllowAll => "allow_all",
            GovernanceMode::AuditWarn => "audit_warn",
            GovernanceMode::EnforceRefusal => "enforce_refusal",
        }
    }
}

impl fmt::Display for GovernanceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A governance mode spelling that is not one of the three known ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseGovernanceModeError {
    /// The text that was given.
    pub given: String,
}

impl fmt::Display for ParseGovernanceModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown governance mode `{}`; expected one of `allow_all`, `audit_warn`, \
             `enforce_refusal`",
            self.given
        )
    }
}

impl std::error::Error for ParseGovernanceModeError {}

impl FromStr for GovernanceMode {
    type Err = ParseGovernanceModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "allow_all" => Ok(GovernanceMode::AllowAll),
            "audit_warn" => Ok(GovernanceMode::AuditWarn),
            "enforce_refusal" => Ok(GovernanceMode::EnforceRefusal),
            other => Err(ParseGovernanceModeError {
                given: other.to_owned(),
            }),
        }
    }
}

/// One configured stop rule: a guarded key and the message explaining why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRule {
    /// The key as configured (`proto`, `deploy/k8s`, `payments.v1`).
    pub key: String,
    /// The configured explanation, shown as the violation.
    pub message: String,
    /// The key split into lower-cased segments, for matching.
    segments: Vec<String>,
}

/// The configured stop rules, matched against a tool call's subject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopRules {
    rules: Vec<StopRule>,
}

impl StopRules {
    /// Builds the rules from `key → message` pairs; empty keys are dropped and the first of
    /// duplicate keys (ignoring case) is kept.
    pub fn new(pairs: Vec<(String, String)>) -> StopRules {
        let mut rules: Vec<StopRule> = Vec::with_capacity(pairs.len());
        for (key, message) in pairs {
            let key = key.trim().to_owned();
            let segments = segments(&key);
            if segments.is_empty() || rules.iter().any(|r| r.key.eq_ignore_ascii_case(&key)) {
                continue;
            }
            rules.push(StopRule {
                key,
                message,
                segments,
            });
        }
        StopRules { rules }
    }

    #[cfg(test)]
    /// True when no rule is configured.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    #[cfg(test)]
    /// The rules in configuration order.
    pub fn iter(&self) -> impl Iterator<Item = &StopRule> {
        self.rules.iter()
    }

    /// The rule guarding `subject`, if any.
    ///
    /// A key matches when, ignoring case, it equals the whole subject or its segments appear
    /// consecutively among the subject's segments (split on `/`, `\`, `.` and whitespace):
    /// `proto` matches `proto/x.proto` and `deploy.Service` but not `prototype/`. When several
    /// match, the longest key wins.
    pub fn matching(&self, subject: &str) -> Option<&StopRule> {
        let subject_trimmed = subject.trim();
        let subject_segments = segments(subject_trimmed);
        self.rules
            .iter()
            .filter(|rule| {
                rule.key.eq_ignore_ascii_case(subject_trimmed)
                    || subject_segments
                        .windows(rule.segments.len())
                        .any(|w| w == rule.segments.as_slice())
            })
            .fold(None, |best: Option<&StopRule>, rule| match best {
                Some(b) if b.key.len() >= rule.key.len() => Some(b),
                _ => Some(rule),
            })
    }
}

impl From<Vec<(String, String)>> for StopRules {
    fn from(pairs: Vec<(String, String)>) -> StopRules {
        StopRules::new(pairs)
    }
}

/// Lower-cased non-empty segments of `text`, split on path separators, dots and whitespace.
fn segments(text: &str) -> Vec<String> {
    text.split(|c: char| c == '/' || c == '\\' || c == '.' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// What the caller should do with a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run the tool.
    Allow,
    /// Run the tool; a stop rule matched and was logged.
    Warn {
        /// The key of the rule that matched.
        rule_key: String,
    },
    /// Do not run the tool; return [`Refusal::to_text`] as a tool error.
    Refuse(Refusal),
}

/// Applies the stop rules to one tool call.
///
/// [`GovernanceMode::AllowAll`] never refuses, [`GovernanceMode::AuditWarn`] logs a warning and
/// allows, [`GovernanceMode::EnforceRefusal`] refuses on a match.
pub fn decide(mode: GovernanceMode, rules: &StopRules, tool: &str, subject: &str) -> Decision {
    if mode == GovernanceMode::AllowAll {
        return Decision::Allow;
    }
    let Some(rule) = rules.matching(subject) else {
        return Decision::Allow;
    };
    match mode {
        GovernanceMode::AllowAll => Decision::Allow,
        GovernanceMode::AuditWarn => {
            tracing::warn!(
                target: "mesh::security",
                tool,
                rule = %rule.key,
                subject,
                "stop rule matched; allowed because governance mode is audit_warn"
            );
            Decision::Warn {
                rule_key: rule.key.clone(),
            }
        }
        GovernanceMode::EnforceRefusal => {
            tracing::warn!(
                target: "mesh::security",
                tool,
                rule = %rule.key,
                subject,
                "stop rule matched; call refused"
            );
            Decision::Refuse(Refusal::new(tool, rule, subject))
        }
    }
}

/// A refused call, rendered for the agent by [`Refusal::to_text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The tool that was called.
    pub tool: String,
    /// The key of the rule that matched.
    pub rule_key: String,
    /// The subject that matched (scope, target or query).
    pub subject: String,
    /// The configured message of the rule.
    pub violation: String,
    /// The policy family, derived from the key.
    pub policy: &'static str,
}

/// The four steps of the required workflow, in order.
#[derive(Serialize)]
struct Workflow {
    step_1: &'static str,
    step_2: &'static str,
    step_3: &'static str,
    step_4: &'static str,
}

/// The payload; field order here is the key order in the JSON.
#[derive(Serialize)]
struct Payload<'a> {
    status: &'static str,
    policy: &'static str,
    rule: &'a str,
    tool: &'a str,
    subject: &'a str,
    violation: &'a str,
    required_workflow: Workflow,
    agent_next_action: &'static str,
    message_to_user: &'static str,
}

impl Refusal {
    fn new(tool: &str, rule: &StopRule, subject: &str) -> Refusal {
        Refusal {
            tool: tool.to_owned(),
            rule_key: rule.key.clone(),
            subject: subject.to_owned(),
            violation: rule.message.clone(),
            policy: policy_for(&rule.key),
        }
    }

    /// The refusal as pretty JSON with a stable key order, sent as the tool's error text.
    pub fn to_text(&self) -> String {
        let payload = Payload {
            status: "GOVERNANCE_BLOCKED",
            policy: self.policy,
            rule: &self.rule_key,
            tool: &self.tool,
            subject: &self.subject,
            violation: &self.violation,
            required_workflow: workflow_for(self.policy),
            agent_next_action: "STOP_AND_REPORT_TO_USER",
            message_to_user: "This request touches a part of the workspace guarded by a stop \
                              rule. The agent has stopped without acting on it. Please review \
                              the violation and carry out or approve the change yourself.",
        };
        // Serialising plain strings into JSON cannot fail; fall back to a minimal payload anyway.
        serde_json::to_string_pretty(&payload).unwrap_or_else(|_| {
            "{\n  \"status\": \"GOVERNANCE_BLOCKED\",\n  \
             \"agent_next_action\": \"STOP_AND_REPORT_TO_USER\"\n}"
                .to_owned()
        })
    }
}

/// The policy family for a key: contracts, infrastructure, or the generic one.
fn policy_for(key: &str) -> &'static str {
    let key = key.to_ascii_lowercase();
    if key.contains("proto") {
        "CONTRACT_FIRST_CASCADE_CI"
    } else if ["k8s", "infra", "deploy"].iter().any(|w| key.contains(w)) {
        "INFRASTRUCTURE_AS_CODE_REVIEW"
    } else {
        "ACTIVE_GOVERNANCE_POLICY"
    }
}

/// The four steps for a policy family; only the third differs.
fn workflow_for(policy: &str) -> Workflow {
    let step_3 = match policy {
        "CONTRACT_FIRST_CASCADE_CI" => {
            "The user changes the contract in its own repository and lets CI cascade it to \
             the services."
        }
        "INFRASTRUCTURE_AS_CODE_REVIEW" => {
            "The user routes the change through the infrastructure review and deployment \
             pipeline."
        }
        _ => "The user decides whether and how the change is made, following the team policy.",
    };
    Workflow {
        step_1: "Stop: do not read further, edit or plan changes for this subject.",
        step_2: "Report the rule and the violation above to the user.",
        step_3,
        step_4: "Continue only after the user confirms how to proceed.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> StopRules {
        StopRules::new(
            pairs
                .iter()
                .map(|(k, m)| ((*k).to_owned(), (*m).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn mode_parsing() {
        let table = [
            ("allow_all", Ok(GovernanceMode::AllowAll)),
            ("audit_warn", Ok(GovernanceMode::AuditWarn)),
            (" enforce_refusal ", Ok(GovernanceMode::EnforceRefusal)),
        ];
        for (text, expected) in table {
            assert_eq!(text.parse::<GovernanceMode>(), expected, "{text}");
        }
        for bad in ["", "enforce", "Allow_All", "deny"] {
            let err = bad.parse::<GovernanceMode>().expect_err(bad);
            let msg = err.to_string();
            assert!(
                msg.contains("`allow_all`, `audit_warn`, `enforce_refusal`"),
                "{msg}"
            );
        }
        assert_eq!(GovernanceMode::default(), GovernanceMode::AllowAll);
        for mode in [
            GovernanceMode::AllowAll,
            GovernanceMode::AuditWarn,
            GovernanceMode::EnforceRefusal,
        ] {
            assert_eq!(mode.to_string().parse::<GovernanceMode>(), Ok(mode));
        }
    }

    #[test]
    fn segment_matching() {
        let r = rules(&[
            ("proto", "contracts change through CI"),
            ("deploy/k8s", "cluster manifests are reviewed"),
            ("Secrets", "ask security"),
        ]);
        let table: &[(&str, Option<&str>)] = &[
            ("proto", Some("proto")),
            ("proto/x.proto", Some("proto")),
            ("services/orders/proto/orders.proto", Some("proto")),
            ("services\\orders\\proto\\orders.proto", Some("proto")),
            ("PROTO/", Some("proto")),
            ("orders.proto", Some("proto")),
            ("prototype/", None),
            ("prototype/x.ts", None),
            ("myproto/x", None),
            ("protobuf", None),
            ("deploy/k8s/app.yaml", Some("deploy/k8s")),
            ("infra/deploy/k8s", Some("deploy/k8s")),
            ("deploy/helm", None),
            ("k8s/deploy", None),
            ("deploy.k8s", Some("deploy/k8s")),
            ("services/secrets", Some("Secrets")),
            ("SECRETS", Some("Secrets")),
            ("secretsmanager", None),
            ("OrderService.Create", None),
            ("", None),
        ];
        for (subject, expected) in table {
            assert_eq!(
                r.matching(subject).map(|rule| rule.key.as_str()),
                *expected,
                "{subject:?}"
            );
        }
    }

    #[test]
    fn dotted_names_and_whole_subjects() {
        let r = rules(&[
            ("deploy", "m1"),
            ("payments.v1", "m2"),
            ("Billing Api", "m3"),
        ]);
        let table: &[(&str, Option<&str>)] = &[
            ("deploy.Service", Some("deploy")),
            ("deploy.Service/Rollout", Some("deploy")),
            ("payments.v1.PaymentService/Charge", Some("payments.v1")),
            ("payments.v2.PaymentService", None),
            ("billing api", Some("Billing Api")),
            ("deployment.Service", None),
        ];
        for (subject, expected) in table {
            assert_eq!(
                r.matching(subject).map(|rule| rule.key.as_str()),
                *expected,
                "{subject:?}"
            );
        }
    }

    #[test]
    fn longest_key_wins_and_duplicates_are_dropped() {
        let r = rules(&[
            ("proto", "short"),
            ("proto/payments", "long"),
            ("PROTO", "duplicate"),
            ("", "empty"),
            (" / ", "only separators"),
        ]);
        assert_eq!(r.iter().count(), 2);
        assert!(!r.is_empty());
        let rule = r.matching("proto/payments/v1.proto").expect("match");
        assert_eq!(rule.message, "long");
        assert_eq!(r.matching("proto/orders").expect("match").message, "short");
        assert!(StopRules::default().is_empty());
        assert_eq!(StopRules::default().matching("proto"), None);
    }

    #[test]
    fn decisions_per_mode() {
        let r = rules(&[("proto", "contracts change through CI")]);
        use GovernanceMode::*;
        let table = [
            (AllowAll, "proto/x.proto", "allow"),
            (AllowAll, "src/x.ts", "allow"),
            (AuditWarn, "proto/x.proto", "warn"),
            (AuditWarn, "src/x.ts", "allow"),
            (EnforceRefusal, "proto/x.proto", "refuse"),
            (EnforceRefusal, "prototype/x.ts", "allow"),
        ];
        for (mode, subject, expected) in table {
            let got = match decide(mode, &r, "smart_search", subject) {
                Decision::Allow => "allow",
                Decision::Warn { rule_key } => {
                    assert_eq!(rule_key, "proto");
                    "warn"
                }
                Decision::Refuse(refusal) => {
                    assert_eq!(refusal.rule_key, "proto");
                    assert_eq!(refusal.subject, subject);
                    "refuse"
                }
            };
            assert_eq!(got, expected, "{mode:?} {subject}");
        }
        assert_eq!(
            decide(EnforceRefusal, &StopRules::default(), "t", "proto"),
            Decision::Allow
        );
    }

    #[test]
    fn refusal_payload() {
        let table = [
            ("proto", "CONTRACT_FIRST_CASCADE_CI"),
            ("shared-protos", "CONTRACT_FIRST_CASCADE_CI"),
            ("k8s", "INFRASTRUCTURE_AS_CODE_REVIEW"),
            ("Infra", "INFRASTRUCTURE_AS_CODE_REVIEW"),
            ("deploy", "INFRASTRUCTURE_AS_CODE_REVIEW"),
            ("billing", "ACTIVE_GOVERNANCE_POLICY"),
        ];
        for (key, policy) in table {
            let r = rules(&[(key, "guarded \"because\" reasons")]);
            let Decision::Refuse(refusal) =
                decide(GovernanceMode::EnforceRefusal, &r, "analyze_grpc", key)
            else {
                panic!("{key} not refused");
            };
            assert_eq!(refusal.policy, policy, "{key}");
            let text = refusal.to_text();
            let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(value["status"], "GOVERNANCE_BLOCKED");
            assert_eq!(value["policy"], policy);
            assert_eq!(value["rule"], key);
            assert_eq!(value["tool"], "analyze_grpc");
            assert_eq!(value["subject"], key);
            assert_eq!(value["violation"], "guarded \"because\" reasons");
            assert_eq!(value["agent_next_action"], "STOP_AND_REPORT_TO_USER");
            let steps = value["required_workflow"].as_object().expect("workflow");
            assert_eq!(
                steps.keys().collect::<Vec<_>>(),
                ["step_1", "step_2", "step_3", "step_4"]
            );
            let message = value["message_to_user"].as_str().expect("message");
            assert!(message.is_ascii() && message.contains("stopped"));
            // Stable key order, as declared.
            let order = [
                "\"status\"",
                "\"policy\"",
                "\"rule\"",
                "\"tool\"",
                "\"subject\"",
                "\"violation\"",
                "\"required_workflow\"",
                "\"agent_next_action\"",
                "\"message_to_user\"",
            ];
            let positions: Vec<usize> = order
                .iter()
                .map(|k| text.find(k).expect("key present"))
                .collect();
            assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
            assert!(!text.contains("**") && !text.contains('#'), "{text}");
        }
    }
}
