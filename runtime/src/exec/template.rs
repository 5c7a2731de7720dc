//! Template strings (`{{exp_id}}`, `{{knobs.qa_loops}}`) rendered with tera from the
//! run context. Text (tasks, paths) is rendered as is; a `run` command is rendered so
//! that no value can change the command's shape: each `{{ … }}` becomes a reference
//! to an environment variable holding the value, quoted for where it stands. A
//! hypothesis such as `"; touch /tmp/pwned; "` or `$(…)` reaches the command as inert
//! text.

use std::collections::BTreeMap;

use serde_json::Value;

/// The values templates can use.
#[derive(Debug, Clone, Default)]
pub struct TemplateContext {
    /// Runtime variables (`project_path`, `exp_id`, …) and knobs under `knobs`.
    pub values: serde_json::Map<String, Value>,
}

impl TemplateContext {
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.values.insert(key.to_string(), value.into());
    }

    fn tera(&self) -> tera::Context {
        tera::Context::from_value(Value::Object(self.values.clone())).unwrap_or_default()
    }
}

/// A template that could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(pub String);

/// Renders `template` as plain text.
pub fn render_text(template: &str, cx: &TemplateContext) -> Result<String, TemplateError> {
    if !template.contains("{{") && !template.contains("{%") {
        return Ok(template.to_string());
    }
    tera::Tera::one_off(template, &cx.tera(), false).map_err(|e| describe(template, &e))
}

/// A shell command and the environment that carries its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    pub script: String,
    pub env: Vec<(String, String)>,
}

/// Renders a `run` command for `sh -c`: values travel in `FACTORY_V<n>` variables.
pub fn render_command(template: &str, cx: &TemplateContext) -> Result<ShellCommand, TemplateError> {
    if template.contains("{%") {
        return Err(TemplateError(format!(
            "`{template}`: control blocks (`{{% … %}}`) are not allowed in run commands; use plain `{{{{ variable }}}}`"
        )));
    }
    let mut script = String::with_capacity(template.len());
    let mut env = Vec::new();
    let mut quote = Quote::None;
    let (placeholders, unclosed) = factory_compiler::ir::conventions::placeholders(template);
    if unclosed.is_some() {
        return Err(TemplateError(format!(
            "`{template}`: a `{{{{` is never closed"
        )));
    }
    let mut copied = 0;
    for p in placeholders {
        let literal = &template[copied..p.whole.start];
        quote = quote.after(literal);
        script.push_str(literal);
        let expr = &template[p.expr];
        let value = render_text(&format!("{{{{ {expr} }}}}"), cx)?;
        let name = format!("FACTORY_V{}", env.len());
        script.push_str(&match quote {
            Quote::Double => format!("${{{name}}}"),
            Quote::None => format!("\"${{{name}}}\""),
            Quote::Single => format!("'\"${{{name}}}\"'"),
        });
        env.push((name, value));
        copied = p.whole.end;
    }
    script.push_str(&template[copied..]);
    Ok(ShellCommand { script, env })
}

/// The quoting state of POSIX shell text, enough to place a variable reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

impl Quote {
    fn after(mut self, text: &str) -> Quote {
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            self = match (self, c) {
                (Quote::None, '\\') | (Quote::Double, '\\') => {
                    chars.next();
                    self
                }
                (Quote::None, '\'') => Quote::Single,
                (Quote::Single, '\'') => Quote::None,
                (Quote::None, '"') => Quote::Double,
                (Quote::Double, '"') => Quote::None,
                _ => self,
            };
        }
        self
    }
}

fn describe(template: &str, err: &tera::Error) -> TemplateError {
    let mut msg = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        msg = s.to_string();
        source = s.source();
    }
    TemplateError(format!("cannot render `{template}`: {msg}"))
}

/// The template variables in `template` that `cx` has no value for (the first
/// segment of a dotted name), so a caller can say what is missing and why.
pub fn missing_vars(template: &str, cx: &TemplateContext) -> Vec<String> {
    factory_compiler::ir::conventions::template_vars(template)
        .into_iter()
        .filter_map(|v| {
            let head = v.split(['.', '|', ' ', '[']).next().unwrap_or(v);
            (!cx.values.contains_key(head)).then(|| head.to_string())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Knob values as template values.
pub fn knob_values(knobs: &BTreeMap<String, Value>) -> Value {
    Value::Object(knobs.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> TemplateContext {
        let mut cx = TemplateContext::default();
        cx.set("project_path", "/tmp/my project");
        cx.set(
            "hypothesis",
            "\"; touch /tmp/pwned; \" $(touch /tmp/pwned) `id` 'q'",
        );
        cx.set("knobs", serde_json::json!({"qa_loops": 3}));
        cx
    }

    #[test]
    fn text_renders_variables_and_knobs() {
        let out = render_text("loops={{knobs.qa_loops}} at {{ project_path }}", &cx()).unwrap();
        assert_eq!(out, "loops=3 at /tmp/my project");
    }

    #[test]
    fn an_unknown_variable_is_an_error_naming_it() {
        let err = render_text("id {{exp_id}}", &cx()).unwrap_err();
        assert!(err.0.contains("exp_id"), "{err}");
        assert_eq!(missing_vars("a {{exp_id}} {{knobs.x}}", &cx()), ["exp_id"]);
    }

    #[test]
    fn command_values_travel_in_the_environment_quoted_for_their_place() {
        let c = render_command(
            "factory begin {{project_path}} --hypothesis \"{{hypothesis}}\" --x '{{knobs.qa_loops}}'",
            &cx(),
        )
        .unwrap();
        assert_eq!(
            c.script,
            "factory begin \"${FACTORY_V0}\" --hypothesis \"${FACTORY_V1}\" --x ''\"${FACTORY_V2}\"''"
        );
        assert_eq!(c.env[0].1, "/tmp/my project");
        assert_eq!(c.env[2].1, "3");
    }

    #[test]
    fn a_hostile_hypothesis_stays_inert_in_a_real_shell() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("pwned");
        let mut cx = cx();
        let evil = format!(
            "\"; touch {m}; \" $(touch {m}) `touch {m}` '; touch {m}; '",
            m = marker.display()
        );
        cx.set("hypothesis", evil.clone());
        for template in [
            "printf %s \"{{hypothesis}}\"",
            "printf %s {{hypothesis}}",
            "printf %s '{{hypothesis}}'",
        ] {
            let c = render_command(template, &cx).unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&c.script)
                .envs(c.env.iter().map(|(k, v)| (k, v)))
                .output()
                .unwrap();
            assert!(!marker.exists(), "{template} ran the payload");
            assert_eq!(String::from_utf8_lossy(&out.stdout), evil, "{template}");
        }
    }

    #[test]
    fn control_blocks_are_refused_in_commands() {
        assert!(render_command("{% if x %}rm{% endif %}", &cx()).is_err());
    }
}
