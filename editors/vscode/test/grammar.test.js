// Tokenizes the sample files with the real TextMate engine VS Code uses
// (vscode-textmate + oniguruma) and compares the scopes with the snapshot.
// Run: npm install && node test/grammar.test.js   (UPDATE=1 rewrites the snapshot)
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;

async function main() {
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      if (scope !== 'source.fwf') return null;
      const file = path.join(root, 'syntaxes', 'fwf.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  const grammar = await registry.loadGrammar('source.fwf');
  const samples = fs.readdirSync(path.join(root, 'samples')).filter((f) => f.endsWith('.fwf')).sort();
  let failed = false;
  for (const sample of samples) {
    const text = fs.readFileSync(path.join(root, 'samples', sample), 'utf8');
    const out = [];
    let stack = vsctm.INITIAL;
    for (const line of text.split('\n')) {
      const r = grammar.tokenizeLine(line, stack);
      for (const t of r.tokens) {
        const s = line.slice(t.startIndex, t.endIndex);
        if (s.trim() === '') continue;
        out.push(`${JSON.stringify(s)} ${t.scopes.slice(1).join(' ') || '-'}`);
      }
      stack = r.ruleStack;
    }
    const got = out.join('\n') + '\n';
    const snap = path.join(__dirname, 'snapshots', sample.replace(/\.fwf$/, '.scopes'));
    if (process.env.UPDATE || !fs.existsSync(snap)) {
      fs.mkdirSync(path.dirname(snap), { recursive: true });
      fs.writeFileSync(snap, got);
      console.log(`wrote ${path.relative(root, snap)}`);
    } else if (fs.readFileSync(snap, 'utf8') !== got) {
      console.error(`${sample}: scopes differ from ${path.relative(root, snap)} (UPDATE=1 to accept)`);
      failed = true;
    } else {
      console.log(`${sample}: ok`);
    }
  }
  // Checks that must hold whatever the snapshot says.
  const text = fs.readFileSync(path.join(root, 'samples', 'sample.fwf'), 'utf8');
  const scopesOf = (needle) => {
    let stack = vsctm.INITIAL;
    for (const line of text.split('\n')) {
      const r = grammar.tokenizeLine(line, stack);
      const at = line.indexOf(needle);
      if (at >= 0) {
        const t = r.tokens.find((t) => t.startIndex <= at && at < t.endIndex);
        return t.scopes;
      }
      stack = r.ruleStack;
    }
    throw new Error(`not in sample: ${needle}`);
  };
  const expect = (needle, scope) => {
    const scopes = scopesOf(needle);
    if (!scopes.includes(scope)) {
      console.error(`${needle}: expected ${scope}, got ${scopes.join(' ')}`);
      failed = true;
    }
  };
  expect('// trailing', 'comment.line.double-slash.fwf');
  expect('/// The mode.', 'comment.line.documentation.fwf');
  expect('workflow sample', 'storage.type.declaration.fwf');
  expect('proceed -> split', 'constant.language.verdict.fwf');
  expect('knobs.loops', 'variable.other.template.fwf');
  expect('->', 'keyword.operator.arrow.fwf');
  expect('"Good?"', 'string.quoted.double.fwf');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
