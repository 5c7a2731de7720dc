//! Names that cross files, through the stdio server: a subgraph declared in one file and
//! `use`d in another is renamed and found in both (from either end), but not in a file
//! whose `use` means another subgraph of the same name; so is a subgraph's parameter,
//! which `use` arguments name; a role's references span the workspace. Each fixture is
//! the workspace's files; those holding the `$0` cursor are open, the others are found
//! on disk.

mod support;

use insta::assert_snapshot;
use support::Session;

#[test]
fn renaming_a_subgraph_at_its_declaration_renames_its_uses_in_importing_files() {
    // Only the library is open: main.fwf is found in the workspace; other.fwf's
    // `review` is its own subgraph, untouched.
    assert_snapshot!(Session::stdio(r#"
//- lib.fwf
subgraph re$0view(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: critic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#).rename("audit"), @"
    lib.fwf:1:10 `review`
    main.fwf:5:9 `review`
    after: clean
    ");
}

#[test]
fn renaming_a_subgraph_at_a_use_renames_its_declaration_in_the_imported_file() {
    // The renamed pair still checks clean.
    let mut s = Session::stdio(
        r#"
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use r$0eview(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: critic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#,
    );
    assert_snapshot!(s.prepare_rename(), @"main.fwf:5:9 `review`");
    assert_snapshot!(s.rename("audit"), @"
    lib.fwf:1:10 `review`
    main.fwf:5:9 `review`
    after: clean
    ");
}

#[test]
fn renaming_a_subgraph_to_a_name_its_file_declares_is_refused() {
    assert_snapshot!(Session::stdio(r#"
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}

subgraph audit() {
    agent y { role: builder }
    flow {
        start -> y -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use r$0eview(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
"#).rename("audit"), @"error: cannot rename `review` to `audit`: `<root>/lib.fwf` already declares `audit`");
}

#[test]
fn references_of_a_subgraph_from_its_declaration_span_its_importers() {
    assert_snapshot!(Session::stdio(r#"
//- lib.fwf
subgraph rev$0iew(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: critic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#).references(true), @"
    lib.fwf:1:10 `review`
    main.fwf:5:9 `review`
    ");
}

#[test]
fn references_of_a_subgraph_from_a_use_span_its_declaration() {
    let mut s = Session::stdio(
        r#"
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use rev$0iew(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: critic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#,
    );
    assert_snapshot!(s.references(true), @"
    main.fwf:5:9 `review`
    lib.fwf:1:10 `review`
    ");
    // Without the declaration: the use alone.
    assert_snapshot!(s.references(false), @"main.fwf:5:9 `review`");
}

#[test]
fn references_of_a_role_span_the_workspace() {
    // `builder` is used in lib.fwf and main.fwf; `critic` in other.fwf only.
    assert_snapshot!(Session::stdio(r#"
//- prompts/critic.md
# Critic
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: $0builder }
    use review(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: cr$0itic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#).references(true), @"
    main.fwf:4:21 `$0builder`:
      main.fwf:4:21 `builder`
      lib.fwf:2:26 `builder`
    other.fwf:2:23 `cr$0itic`:
      other.fwf:2:21 `critic`
    ");
}

#[test]
fn renaming_a_subgraph_parameter_renames_the_arguments_that_name_it() {
    assert_snapshot!(Session::stdio(r#"
//- lib.fwf
subgraph review(f$0ix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
"#).rename("repair"), @"
    lib.fwf:1:17 `fix`
    main.fwf:5:16 `fix`
    after: clean
    ");
}

#[test]
fn renaming_an_argument_renames_the_subgraph_parameter_it_names() {
    assert_snapshot!(Session::stdio(r#"
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(f$0ix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
"#).rename("repair"), @"
    lib.fwf:1:17 `fix`
    main.fwf:5:16 `fix`
    after: clean
    ");
}
