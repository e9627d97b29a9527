#!/usr/bin/env node
// Tokenize PCSC files with the extension's TextMate grammar, the way VS Code does
// (vscode-textmate + the Oniguruma regex engine compiled to WebAssembly).
//
//   node test/tokenize.js FILE...        tokens of each file
//   node test/tokenize.js --stdin        reads {"name": "text", ...} as JSON
//
// Prints one JSON object: {name: [{line, start, end, text, scopes}, ...], ...},
// lines counted from 1, columns from 0, `end` exclusive; `scopes` outermost first.
'use strict';

const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const HERE = path.resolve(__dirname, '..');
const GRAMMAR = path.join(HERE, 'syntaxes', 'pcsc.tmLanguage.json');
const SCOPE = 'source.pcsc';

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== SCOPE) return null;
      return vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR);
    },
  });
  const grammar = await registry.loadGrammar(SCOPE);
  if (!grammar) throw new Error(`cannot load ${GRAMMAR}`);
  return grammar;
}

function tokenize(grammar, text) {
  const out = [];
  let state = vsctm.INITIAL;
  const lines = text.split(/\r\n|\r|\n/);
  lines.forEach((line, i) => {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      const end = Math.min(token.endIndex, line.length);
      if (end <= token.startIndex) continue; // the line's final newline
      out.push({
        line: i + 1,
        start: token.startIndex,
        end,
        text: line.slice(token.startIndex, end),
        scopes: token.scopes,
      });
    }
    state = result.ruleStack;
  });
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  let inputs;
  if (args.length === 1 && args[0] === '--stdin') {
    inputs = JSON.parse(fs.readFileSync(0, 'utf8'));
  } else if (args.length > 0) {
    inputs = {};
    for (const file of args) inputs[file] = fs.readFileSync(file, 'utf8');
  } else {
    process.stderr.write('usage: tokenize.js FILE... | --stdin\n');
    process.exit(2);
  }
  const grammar = await loadGrammar();
  const result = {};
  for (const [name, text] of Object.entries(inputs)) result[name] = tokenize(grammar, text);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
