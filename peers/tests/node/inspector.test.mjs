// MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0 --cli, Node 22) smoke test on bookshop:
// tools/list and tools/call with --format json, in both eras (--protocol-era legacy | modern),
// over stdio (the inspector spawns the binary) and Streamable HTTP. Exact JSON on stdout, exact
// exit codes (0 ok, 5 isError). The inspector declares no elicitation/sampling capability, so only
// calls that ask nothing are exercised here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { EXPECTED_TOOLS, binary, startHttp } from './harness.mjs';

const require = createRequire(import.meta.url);
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js');
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'Bookshop', version: '1.0.0' } };
// Result `_meta` seen per modern cell: checked by the gated test at the end (see there).
const modernMeta = {};

/** Splits a result into its `_meta` and the rest. */
function splitMeta(output) {
  const { _meta, ...rest } = output.result;
  return { meta: _meta, rest: { result: rest } };
}

/** Runs the inspector CLI; resolves {code, stdout, stderr}. */
function inspector(target, args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [INSPECTOR, '--cli', ...target, ...args, '--format', 'json'],
      { timeout: 30_000, encoding: 'utf8' },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
  });
}

for (const transport of ['stdio', 'http']) {
  for (const era of ['legacy', 'modern']) {
    test(`inspector --cli bookshop [${transport}-${era}]`, { timeout: 120_000 }, async () => {
      let http = null;
      let target;
      if (transport === 'stdio') {
        target = [binary('bookshop'), '--log-level', 'error', '--'];
      } else {
        http = await startHttp('bookshop');
        target = [http.url];
      }
      const eraArgs = ['--protocol-era', era];
      const metas = [];
      try {
        const list = await inspector(target, ['--method', 'tools/list', ...eraArgs]);
        assert.equal(list.code, 0, list.stderr);
        assert.deepEqual(JSON.parse(list.stdout), { result: { tools: EXPECTED_TOOLS.bookshop } });

        const call = await inspector(target,
          ['--method', 'tools/call', '--tool-name', 'search_books', '--tool-arg', 'query=dune', '--tool-arg', 'limit=2',
            ...eraArgs]);
        assert.equal(call.code, 0, call.stderr);
        const text = "Found 3 books matching 'dune' (showing up to 2).";
        const callOut = splitMeta(JSON.parse(call.stdout));
        metas.push(callOut.meta);
        assert.deepEqual(callOut.rest, {
          result: { content: [{ type: 'text', text }], structuredContent: { result: text }, isError: false },
        });

        const bad = await inspector(target,
          ['--method', 'tools/call', '--tool-name', 'search_books', '--tool-args-json', '{"query":"dune","limit":99}',
            ...eraArgs]);
        assert.equal(bad.code, 5, bad.stderr);
        const badOut = splitMeta(JSON.parse(bad.stdout));
        metas.push(badOut.meta);
        assert.deepEqual(badOut.rest, {
          result: {
            content: [{ type: 'text', text: 'Error executing tool search_books: /limit (maximum): 99 is greater than the maximum of 50' }],
            isError: true,
          },
        });
        assert.deepEqual(JSON.parse(bad.stderr.trim().split('\n').at(-1)),
          { error: { code: 'tool_is_error', message: "Tool 'search_books' returned isError:true." } });
        if (era === 'legacy') assert.deepEqual(metas, [undefined, undefined], 'legacy results carry no _meta');
        else modernMeta[transport] = metas;
      } finally {
        if (http) await http.stop();
      }
    });
  }
}

// 2026-07-28 results SHOULD carry `_meta["io.modelcontextprotocol/serverInfo"]` (as the Python SDK
// does).
for (const transport of ['stdio', 'http']) {
  test(`inspector modern results carry _meta serverInfo [${transport}-modern]`, () => {
    assert.deepEqual(modernMeta[transport], [SERVER_INFO, SERVER_INFO]);
  });
}
