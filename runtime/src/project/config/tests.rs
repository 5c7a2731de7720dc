use super::*;
use std::fs;

const FULL: &str = "\
# Factory: demo

A demo project.

## Goal
Make the parser faster
without breaking anything.

## Scope (modifiable files)
- `src/**`
- tests/**/*.rs

## Guards
- cargo test
- cargo clippy -- -D warnings

## Command
`python eval/score.py`

## Threshold
0.7

## Constraints
- No new dependencies
  unless they are tiny.

## Fixed surfaces
- eval/**

## Project eval
- name: latency
  command: ./bench.sh
    --quick
  parse: json
  weight: 0.5
  timeout: 120
  description: p50 latency in ms
- name: docs
  command: make docs

## Hard constraints
- name: no-secrets
  check: ./scripts/check_secrets.sh
  description: never commit keys

## Parallel
- parallel_hypotheses: 3

## Adversarial
```json
{\"generator\": {\"role\": \"generator\", \"eval_command\": \"g\", \"metric_name\": \"m\", \"threshold\": 0.5},
 \"discriminator\": {\"role\": \"discriminator\", \"eval_command\": \"d\", \"metric_name\": \"m\", \"threshold\": 0.6},
 \"hysteresis\": 2}
```

## Test timeout
120

## Release Notes
Ship on Fridays.
- never on Mondays
";

fn parse(text: &str) -> Result<FactoryConfig, ConfigError> {
    parse_factory_md(text, Path::new("factory.md"))
}

#[test]
fn parses_aliases_lists_and_text() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.goal, "Make the parser faster\nwithout breaking anything.");
    assert_eq!(c.scope, vec!["src/**", "tests/**/*.rs"]);
    assert_eq!(c.guards, vec!["cargo test", "cargo clippy -- -D warnings"]);
    assert_eq!(c.eval_command, "python eval/score.py");
    assert_eq!(c.eval_threshold, 0.7);
    assert_eq!(c.fixed_surfaces, vec!["eval/**"]);
    assert_eq!(c.target_branch, "main", "default kept");
    assert_eq!(c.test_timeout, 120);
    assert_eq!(c.parallel.as_ref().unwrap().parallel_hypotheses, Some(3));
    let adv = c.adversarial.as_ref().unwrap();
    assert_eq!((adv.hysteresis, adv.convergence_window), (2, 5));
}

#[test]
fn headings_resolve_by_alias_and_ignore_parentheses() {
    assert_eq!(field_for_heading("Modifiable"), Some("scope"));
    assert_eq!(field_for_heading("Scope (modifiable files)"), Some("scope"));
    assert_eq!(field_for_heading("Eval Command:"), Some("eval_command"));
    assert_eq!(field_for_heading("Do not modify"), Some("fixed_surfaces"));
    assert_eq!(field_for_heading("Release notes"), None);
}

#[test]
fn continuation_lines_join_the_item() {
    let c = parse(FULL).unwrap();
    assert_eq!(
        c.constraints,
        vec!["No new dependencies\nunless they are tiny."]
    );
}

#[test]
fn multi_line_blocks_become_eval_dimensions_and_hard_constraints() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.project_eval.len(), 2);
    let lat = &c.project_eval[0];
    assert_eq!(lat.name, "latency");
    assert_eq!(lat.command, "./bench.sh\n--quick");
    assert_eq!(lat.parse, EvalParse::Json);
    assert_eq!((lat.weight, lat.timeout), (0.5, 120));
    assert_eq!(lat.description, "p50 latency in ms");
    assert_eq!(c.project_eval[1].parse, EvalParse::ExitCode, "default");
    assert_eq!(
        c.hard_constraints,
        vec![HardConstraint {
            name: "no-secrets".into(),
            check: "./scripts/check_secrets.sh".into(),
            description: "never commit keys".into(),
        }]
    );
}

#[test]
fn unknown_headings_are_kept_in_snake_case() {
    let c = parse(FULL).unwrap();
    assert_eq!(
        c.extra_sections.get("release_notes").map(String::as_str),
        Some("Ship on Fridays.\n- never on Mondays")
    );
    // Text under the title heading is a section like any other.
    assert_eq!(
        c.extra_sections.get("factory_demo").map(String::as_str),
        Some("A demo project.")
    );
    // And they survive a round trip through config.json.
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<FactoryConfig>(&json).unwrap(), c);
}

#[test]
fn bad_test_timeout_falls_back_to_600() {
    for bad in ["abc", "0", "-5", "1.5", "10 minutes"] {
        let text = FULL.replace("## Test timeout\n120", &format!("## Test timeout\n{bad}"));
        assert_eq!(parse(&text).unwrap().test_timeout, 600, "for {bad:?}");
    }
    let text = FULL.replace("## Test timeout\n120", "## Test timeout\n1");
    assert_eq!(parse(&text).unwrap().test_timeout, 1);
    let text = FULL.replace("## Test timeout\n120\n", "");
    assert_eq!(parse(&text).unwrap().test_timeout, 600);
}

#[test]
fn thresholds_may_follow_the_base_and_be_set_per_dimension() {
    let text = FULL.replace("## Threshold\n0.7", "## Threshold\nbase - 0.02")
        + "\n## Dimension thresholds\n- coverage: base - 0.01\n- tests: 1.0\n- lint: base\n";
    let c = parse(&text).unwrap();
    assert_eq!(c.eval_threshold, Threshold::Base { tolerance: 0.02 });
    assert_eq!(
        c.dimension_thresholds.into_iter().collect::<Vec<_>>(),
        vec![
            ("coverage".to_string(), Threshold::Base { tolerance: 0.01 }),
            ("lint".to_string(), Threshold::Base { tolerance: 0.0 }),
            ("tests".to_string(), Threshold::Score(1.0)),
        ]
    );
    // config.json keeps what factory.md said, and reads back to the same.
    let c = parse(&text).unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["eval_threshold"], "base - 0.02");
    assert_eq!(json["dimension_thresholds"]["tests"], 1.0);
    let back: FactoryConfig = serde_json::from_value(json).unwrap();
    assert_eq!(back, c);

    let bad = FULL.to_string() + "\n## Dimension thresholds\n- coverage: most\n";
    let err = parse(&bad).unwrap_err().to_string();
    assert!(
        err.contains("Dimension thresholds") && err.contains("`most` is not a threshold"),
        "{err}"
    );
}

#[test]
fn errors_name_the_section_line_and_fix() {
    let text = FULL.replace("## Threshold\n0.7", "## Threshold\nhigh");
    let err = parse(&text).unwrap_err();
    let ConfigError::FactoryMd { line, problem, .. } = &err else {
        panic!("{err:?}")
    };
    let expected_line = text.lines().position(|l| l == "high").unwrap() + 1;
    assert_eq!(*line, Some(expected_line));
    assert!(
        problem.contains("Threshold")
            && problem.contains("`high` is not a threshold")
            && problem.contains("`base`"),
        "{problem}"
    );
    let help = miette::Diagnostic::help(&err).unwrap().to_string();
    assert!(help.contains("factory init --reparse"), "{help}");

    let text = FULL.replace("  command: make docs", "  comand: make docs");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("comand") && err.contains("docs"), "{err}");

    let err = parse("## Goal\nx\n").unwrap_err().to_string();
    assert!(
        err.contains("`## Scope`") && err.contains("`## Eval threshold`"),
        "{err}"
    );
}

#[test]
fn parallel_section_reads_its_keys_and_defaults() {
    assert_eq!(parse(MINIMAL).unwrap().parallel, None, "absent section");
    let text = format!(
        "{MINIMAL}## Parallel\n- parallel_hypotheses: `8`\n- selection_strategy: best_score\n"
    );
    assert_eq!(
        parse(&text).unwrap().parallel,
        Some(ParallelConfig {
            parallel_hypotheses: Some(8),
            selection_strategy: SelectionStrategy::BestScore,
        })
    );
    // A missing count leaves it to the workflow's `parallel` count.
    let text = format!("{MINIMAL}## Parallel\nselection_strategy: best_score\n");
    let p = parse(&text).unwrap().parallel.unwrap();
    assert_eq!(p.parallel_hypotheses, None);
    assert_eq!(p.selection_strategy, SelectionStrategy::BestScore);
    // The fenced JSON form is read too, and range-checked.
    let text = format!("{MINIMAL}## Parallel\n```json\n{{\"parallel_hypotheses\": 2}}\n```\n");
    assert_eq!(
        parse(&text).unwrap().parallel.unwrap().parallel_hypotheses,
        Some(2)
    );
    let text = format!("{MINIMAL}## Parallel\n```json\n{{\"parallel_hypotheses\": 0}}\n```\n");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("from 1 to 8"), "{err}");
}

#[test]
fn bad_parallel_values_are_errors_at_their_line_with_the_fix() {
    let cases = [
        ("parallel_hypotheses: 0", "from 1 to 8"),
        ("parallel_hypotheses: -1", "from 1 to 8"),
        ("parallel_hypotheses: 9", "from 1 to 8"),
        ("parallel_hypotheses: three", "not a whole number"),
        ("selection_strategy: fastest", "write one of `best_score`"),
        ("paralel_hypotheses: 3", "unknown key `paralel_hypotheses`"),
        ("run three at once", "not a `key: value` line"),
    ];
    for (bad, why) in cases {
        // The bad line is the second of the section, so its own line is what is named.
        let first = if bad.starts_with("selection") {
            "parallel_hypotheses: 2"
        } else {
            "selection_strategy: best_score"
        };
        let text = format!("{MINIMAL}## Parallel\n- {first}\n- {bad}\n");
        let err = parse(&text).unwrap_err();
        let ConfigError::FactoryMd {
            line,
            problem,
            path,
        } = &err
        else {
            panic!("{bad}: {err:?}")
        };
        assert_eq!(path, Path::new("factory.md"));
        assert_eq!(*line, Some(MINIMAL.lines().count() + 3), "{bad}");
        assert!(
            problem.contains("Parallel") && problem.contains(why),
            "{bad}: {problem}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("factory.md:{}:", line.unwrap()))
        );
    }
    let text =
        format!("{MINIMAL}## Parallel\n- parallel_hypotheses: 2\n- parallel_hypotheses: 3\n");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("set twice"), "{err}");
}

#[test]
fn parallel_round_trips_through_config_json_and_is_checked_there() {
    let tmp = tempfile::tempdir().unwrap();
    for section in [
        "## Parallel\n- parallel_hypotheses: 4\n",
        "## Parallel\n- selection_strategy: best_score\n",
    ] {
        let config = parse(&format!("{MINIMAL}{section}")).unwrap();
        write_config(tmp.path(), &config).unwrap();
        assert_eq!(read_config(tmp.path()).unwrap(), config, "{section}");
    }
    let path = tmp.path().join(".factory/config.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    value["parallel"]["parallel_hypotheses"] = serde_json::json!(9);
    fs::write(&path, value.to_string()).unwrap();
    let err = read_config(tmp.path()).unwrap_err().to_string();
    assert!(
        err.contains("parallel_hypotheses") && err.contains("from 1 to 8"),
        "{err}"
    );
    value["parallel"]["parallel_hypotheses"] = serde_json::json!(3);
    value["parallel"]["selection_strategy"] = serde_json::json!("fastest");
    fs::write(&path, value.to_string()).unwrap();
    assert!(matches!(
        read_config(tmp.path()),
        Err(ConfigError::InvalidJson { .. })
    ));
}

#[test]
fn config_json_is_strict_and_errors_name_their_remedy() {
    let tmp = tempfile::tempdir().unwrap();
    let err = read_config(tmp.path()).unwrap_err();
    assert!(matches!(err, ConfigError::Missing { .. }));
    assert!(err.to_string().contains("config.json"));
    let help = miette::Diagnostic::help(&err).unwrap().to_string();
    assert!(help.contains("factory init"), "{help}");

    // load() falls back to factory.md; with neither, it says to write one.
    let err = load(tmp.path()).unwrap_err();
    assert!(matches!(err, ConfigError::MissingFactoryMd { .. }));
    assert!(
        miette::Diagnostic::help(&err)
            .unwrap()
            .to_string()
            .contains("factory init")
    );
    fs::write(tmp.path().join("factory.md"), FULL).unwrap();
    assert_eq!(
        load(tmp.path()).unwrap().eval_command,
        "python eval/score.py"
    );

    let config = parse(FULL).unwrap();
    write_config(tmp.path(), &config).unwrap();
    assert_eq!(read_config(tmp.path()).unwrap(), config);

    let path = tmp.path().join(".factory/config.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    value["surprise"] = serde_json::json!(1);
    fs::write(&path, value.to_string()).unwrap();
    let err = read_config(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("surprise"), "{err}");
    assert!(
        miette::Diagnostic::help(&err)
            .unwrap()
            .to_string()
            .contains("--reparse")
    );

    // No coercion: a threshold written as a string is an error, not 0.7.
    value.as_object_mut().unwrap().remove("surprise");
    value["eval_threshold"] = serde_json::json!("0.7");
    fs::write(&path, value.to_string()).unwrap();
    assert!(matches!(
        read_config(tmp.path()),
        Err(ConfigError::InvalidJson { .. })
    ));
    // load() reports the broken config.json rather than silently using factory.md.
    assert!(matches!(
        load(tmp.path()),
        Err(ConfigError::InvalidJson { .. })
    ));

    fs::write(&path, "{ not json").unwrap();
    assert!(
        read_config(tmp.path())
            .unwrap_err()
            .to_string()
            .contains("config.json")
    );
}

#[test]
fn init_writes_config_and_gitignore_idempotently() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(".gitignore"), "target").unwrap();
    let err = init_project(tmp.path(), false).unwrap_err();
    assert!(matches!(err, ConfigError::MissingFactoryMd { .. }));
    assert!(
        !tmp.path().join(".factory").exists(),
        "nothing written on failure"
    );

    fs::write(tmp.path().join("factory.md"), FULL).unwrap();
    let r = init_project(tmp.path(), false).unwrap();
    assert!(r.wrote_config && r.gitignore_updated && r.backup.is_none());
    assert_eq!(
        fs::read_to_string(tmp.path().join(".gitignore")).unwrap(),
        "target\n.factory/\n"
    );

    // Second run: nothing changes, even if factory.md changed (needs --reparse).
    fs::write(tmp.path().join("factory.md"), FULL.replace("0.7", "0.8")).unwrap();
    let r = init_project(tmp.path(), false).unwrap();
    assert!(!r.wrote_config && !r.gitignore_updated);
    assert_eq!(read_config(tmp.path()).unwrap().eval_threshold, 0.7);

    let r = init_project(tmp.path(), true).unwrap();
    assert!(r.wrote_config);
    assert_eq!(read_config(tmp.path()).unwrap().eval_threshold, 0.8);
    let bak = r.backup.unwrap();
    assert!(fs::read_to_string(bak).unwrap().contains("0.7"));
    assert_eq!(
        fs::read_to_string(tmp.path().join(".gitignore")).unwrap(),
        "target\n.factory/\n"
    );
}

#[test]
fn gitignore_recognises_equivalent_lines() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(".gitignore"), "/.factory\n").unwrap();
    assert!(!add_to_gitignore(tmp.path()).unwrap());
    let fresh = tempfile::tempdir().unwrap();
    assert!(add_to_gitignore(fresh.path()).unwrap());
    assert_eq!(
        fs::read_to_string(fresh.path().join(".gitignore")).unwrap(),
        ".factory/\n"
    );
}

const MINIMAL: &str = "## Goal\ng\n## Scope\n- src/**\n## Guards\n- true\n## Eval command\necho 1\n## Eval threshold\n0.5\n## Constraints\n- none\n";

#[test]
fn nested_sections_take_key_value_lines_with_dotted_keys() {
    let text = format!(
        "{MINIMAL}\n## Eval weights\n- hygiene: 0.3\n- growth: 0.2\n- project: 0.5\n\
         ## Inner loop\nruns_per_cycle: 3\naggregate: median\n\
         ## Growth weights\n- test_count: 0.7\n\
         ## Adversarial\ngenerator.role: generator\ngenerator.eval_command: ./gen.sh\n\
         generator.metric_name: fooled\ngenerator.threshold: 0.5\n\
         discriminator.role: discriminator\ndiscriminator.eval_command: ./disc.sh\n\
         discriminator.metric_name: caught\ndiscriminator.threshold: 0.7\nmax_rounds: 20\n"
    );
    let c = parse(&text).unwrap();
    assert_eq!(
        (
            c.eval_weights.hygiene,
            c.eval_weights.growth,
            c.eval_weights.project
        ),
        (0.3, 0.2, 0.5)
    );
    let inner = c.inner_loop.unwrap();
    assert_eq!(
        (inner.runs_per_cycle, inner.aggregate),
        (3, AggregateMethod::Median)
    );
    assert_eq!(inner.plateau_threshold, 3, "default kept");
    assert_eq!(c.growth_weights.unwrap().0.get("test_count"), Some(&0.7));
    let adv = c.adversarial.unwrap();
    assert_eq!(adv.discriminator.eval_command, "./disc.sh");
    assert_eq!((adv.generator.threshold, adv.max_rounds), (0.5, Some(20)));
}

#[test]
fn a_typo_in_a_nested_section_is_an_error_at_its_line() {
    let text = format!("{MINIMAL}## Parallel\nparalel_hypotheses: 3\n");
    let err = parse(&text).unwrap_err();
    let ConfigError::FactoryMd { line, problem, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, Some(MINIMAL.lines().count() + 2));
    assert!(
        problem.contains("paralel_hypotheses") && problem.contains("Parallel"),
        "{problem}"
    );
}

#[test]
fn load_synced_takes_factory_md_and_refreshes_what_disagrees() {
    let tmp = tempfile::tempdir().unwrap();
    // Without factory.md, config.json is what there is.
    let config = parse(FULL).unwrap();
    write_config(tmp.path(), &config).unwrap();
    let synced = load_synced(tmp.path()).unwrap();
    assert_eq!(synced.config, config);
    assert_eq!(synced.refreshed, None);
    assert!(synced.source.ends_with("config.json"));

    // In step: read from factory.md, nothing written.
    fs::write(tmp.path().join("factory.md"), FULL).unwrap();
    let synced = load_synced(tmp.path()).unwrap();
    assert_eq!(synced.refreshed, None);
    assert!(synced.source.ends_with("factory.md"));
    assert!(!tmp.path().join(".factory/config.json.bak").exists());

    // factory.md edited: config.json is rewritten from it, the old one kept.
    fs::write(
        tmp.path().join("factory.md"),
        FULL.replace("0.7\n", "0.9\n"),
    )
    .unwrap();
    let synced = load_synced(tmp.path()).unwrap();
    assert_eq!(synced.config.eval_threshold, 0.9);
    assert!(synced.refreshed.is_some());
    assert_eq!(read_config(tmp.path()).unwrap().eval_threshold, 0.9);
    let bak: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(tmp.path().join(".factory/config.json.bak")).unwrap(),
    )
    .unwrap();
    assert_eq!(bak["eval_threshold"], 0.7);

    // A broken config.json is refreshed too; factory.md is the authority.
    fs::write(tmp.path().join(".factory/config.json"), "{ not json").unwrap();
    assert!(load_synced(tmp.path()).unwrap().refreshed.is_some());
    assert_eq!(read_config(tmp.path()).unwrap().eval_threshold, 0.9);

    // A broken factory.md is reported, naming it, whatever config.json says.
    fs::write(tmp.path().join("factory.md"), FULL.replace("0.7", "lots")).unwrap();
    assert!(matches!(
        load_synced(tmp.path()),
        Err(ConfigError::FactoryMd { .. })
    ));

    // No config.json: nothing is created.
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join("factory.md"), FULL).unwrap();
    assert_eq!(load_synced(other.path()).unwrap().refreshed, None);
    assert!(!other.path().join(".factory").exists());
}

#[test]
fn setup_takes_one_command_per_bullet_or_per_line_of_a_fenced_block() {
    let none = parse(MINIMAL).unwrap();
    assert!(none.setup.is_empty(), "no section, no set-up");
    assert!(
        !serde_json::to_string(&none).unwrap().contains("setup"),
        "an empty set-up is left out of config.json"
    );
    let text = format!(
        "{MINIMAL}## Setup\n- `npm ci`\n- python3 -m venv .venv && .venv/bin/pip install -e .\n"
    );
    let c = parse(&text).unwrap();
    assert_eq!(
        c.setup,
        vec![
            "npm ci",
            "python3 -m venv .venv && .venv/bin/pip install -e ."
        ]
    );
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<FactoryConfig>(&json).unwrap(), c);
    for heading in ["Set up", "Setup commands", "Environment setup"] {
        let text = format!("{MINIMAL}## {heading}\n```sh\nnpm ci\n\ngo mod download\n```\n");
        assert_eq!(
            parse(&text).unwrap().setup,
            vec!["npm ci", "go mod download"],
            "{heading}"
        );
    }
    // A continuation line belongs to its bullet's script.
    let text = format!("{MINIMAL}## Setup\n- if [ -f x ]; then\n  make x; fi\n");
    assert_eq!(
        parse(&text).unwrap().setup,
        vec!["if [ -f x ]; then\nmake x; fi"]
    );
}

#[test]
fn an_empty_setup_command_is_an_error_at_its_section() {
    let text = format!("{MINIMAL}## Setup\n- npm ci\n-\n");
    let err = parse(&text).unwrap_err();
    let ConfigError::FactoryMd { line, problem, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, Some(MINIMAL.lines().count() + 2));
    assert!(
        problem.contains("Setup") && problem.contains("command 2 is empty"),
        "{problem}"
    );
    let text = format!("{MINIMAL}## Setup\n- npm ci\n## Set up\n- npm install\n");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("appears twice"), "{err}");
}

#[test]
fn a_project_dimension_may_say_whether_it_is_deterministic() {
    let text = format!(
        "{MINIMAL}## Project eval\n- name: bench\n  command: ./bench.sh\n  parse: json\n- name: lint\n  command: ./lint.sh\n- name: timing\n  command: ./t.sh\n  parse: exit_code\n  deterministic: false\n"
    );
    let c = parse(&text).unwrap();
    let d: Vec<bool> = c
        .project_eval
        .iter()
        .map(|d| d.is_deterministic())
        .collect();
    assert_eq!(
        d,
        vec![false, true, false],
        "json varies, exit codes do not, unless said"
    );
}

#[test]
fn placement_is_host_or_sandbox_and_anything_else_an_error_at_its_line() {
    assert_eq!(parse(MINIMAL).unwrap().placement, None);
    let c = parse(&format!("{MINIMAL}## Placement\nsandbox\n")).unwrap();
    assert_eq!(c.placement, Some(factory_compiler::ir::Placement::Sandbox));
    let text = format!("{MINIMAL}## Placement\ncontainer\n");
    let err = parse(&text).unwrap_err();
    let ConfigError::FactoryMd { line, problem, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        *line,
        text.lines().position(|l| l == "container").map(|i| i + 1)
    );
    assert!(
        problem.contains("Placement") && problem.contains("container"),
        "{problem}"
    );
}
