'use strict';
// factory's mocha reporter (runtime/src/guards/tests/js.rs): one JSON line per test,
// appended to $FACTORY_TEST_REPORT, with the test's file and its title path. mocha's own
// reporters print a test's titles joined by spaces (`tap`, `json`), which cannot be split
// back into describe blocks; this one keeps them apart. Plain ES5, no dependencies: it
// runs under every mocha from 3 on.
var fs = require('fs');
var out = process.env.FACTORY_TEST_REPORT;

function titles(r) {
  if (typeof r.titlePath === 'function') return r.titlePath();
  var t = [r.title];
  for (var s = r.parent; s && !s.root; s = s.parent) if (s.title) t.unshift(s.title);
  return t;
}

function fileOf(r) {
  for (var s = r; s; s = s.parent) if (s.file) return s.file;
  return null;
}

function emit(r, state, path) {
  var line = { file: fileOf(r), titles: path || titles(r), state: state };
  fs.appendFileSync(out, JSON.stringify(line) + '\n');
}

function Reporter(runner) {
  var seen = [];
  runner.on('pass', function (t) { seen.push(t); emit(t, 'passed'); });
  runner.on('pending', function (t) { seen.push(t); emit(t, 'skipped'); });
  runner.on('fail', function (t) {
    if (t.type !== 'hook') { seen.push(t); emit(t, 'failed'); return; }
    // A failing hook stops its suite: each test in it that has no result failed with it.
    var missed = 0;
    (function walk(s) {
      (s.tests || []).forEach(function (x) {
        if (seen.indexOf(x) < 0) { seen.push(x); missed++; emit(x, 'failed'); }
      });
      (s.suites || []).forEach(walk);
    })(t.parent || {});
    if (!missed) {
      // An `after` hook, or parallel mode (no suite tree): the hook itself, without
      // the `for "<first test>"` mocha appends, so its id does not move with the tests.
      var path = titles(t).slice();
      path[path.length - 1] = String(t.title).replace(/ (?:for|in) ".*"$/, '');
      emit(t, 'failed', path);
    }
  });
}

module.exports = Reporter;
