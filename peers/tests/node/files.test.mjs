// Files (an `outcome: true` binding) through the TypeScript v2 client, in every cell.
// Every test starts a fresh server, so the folders start as in the seed.
import assert from 'node:assert/strict';
import { EXPECTED_TOOLS, Script, overCells, withSession } from './harness.mjs';

const PROJECT_QUESTION = {
  form: {
    message: '/tmp/project has 2 file(s). Delete anyway?',
    schema: { description: "The user's confirmation.", type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
};

overCells('files tools/list is exact', {}, async (cell) => {
  await withSession('files', cell, new Script(), async (s) => {
    assert.deepEqual(await s.tools(), EXPECTED_TOOLS.files);
  });
});

overCells('files empty folder is deleted without a question', {}, async (cell) => {
  const script = new Script();
  await withSession('files', cell, script, async (s) => {
    assert.equal(await s.text('delete_folder', { path: '/tmp/empty' }), 'deleted /tmp/empty');
  });
  assert.deepEqual(script.asked, []);
});

overCells('files accepted ok deletes', { needsMrtr: true }, async (cell) => {
  const script = new Script().accept({ ok: true });
  await withSession('files', cell, script, async (s) => {
    assert.equal(await s.text('delete_folder', { path: '/tmp/project' }), 'deleted /tmp/project');
    assert.deepEqual(script.asked, [PROJECT_QUESTION]);
    // The folder is gone now: nothing to confirm the second time.
    assert.equal(await s.text('delete_folder', { path: '/tmp/project' }), 'deleted /tmp/project');
  });
  assert.deepEqual(script.asked, [PROJECT_QUESTION]);
});

overCells('files accepted not ok keeps', { needsMrtr: true }, async (cell) => {
  const script = new Script().accept({ ok: false });
  await withSession('files', cell, script, async (s) => {
    assert.equal(await s.text('delete_folder', { path: '/tmp/project' }), 'kept the folder');
  });
  assert.deepEqual(script.asked, [PROJECT_QUESTION]);
});

overCells('files declined', { needsMrtr: true }, async (cell) => {
  const script = new Script().answer('decline');
  await withSession('files', cell, script, async (s) => {
    assert.equal(await s.text('delete_folder', { path: '/tmp/project' }), 'declined: folder not deleted');
  });
  assert.deepEqual(script.asked, [PROJECT_QUESTION]);
});

overCells('files cancelled', { needsMrtr: true }, async (cell) => {
  const script = new Script().answer('cancel');
  await withSession('files', cell, script, async (s) => {
    assert.equal(await s.text('delete_folder', { path: '/tmp/project' }), 'cancelled: folder not deleted');
  });
  assert.deepEqual(script.asked, [PROJECT_QUESTION]);
});

overCells('files URL-only elicitation does not cover the form question', { needsMrtr: true }, async (cell) => {
  const script = new Script();
  await withSession('files', cell, script, async (s) => {
    assert.deepEqual(await s.protocolError('delete_folder', { path: '/tmp/project' }), {
      code: -32021,
      message: "Client did not declare the form elicitation capability required by resolver 'confirm_delete'",
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    assert.equal(await s.text('delete_folder', { path: '/tmp/empty' }), 'deleted /tmp/empty');
  }, { elicitation: { url: {} }, sampling: {} });
  assert.deepEqual(script.asked, []);
});

const PROJECT_ENTRIES = [
  { name: 'main.py', modified: '2026-03-01T09:30:00+09:00' },
  { name: 'README.md', modified: '2026-02-27T18:00:00-05:00' },
];

// `list_folder` returns an array of `$defs` objects: the client validates the structured result
// against the advertised outputSchema (its `$ref` resolving at the root) and accepts it.
overCells('files a non-object output with $defs is accepted by the client', {}, async (cell) => {
  await withSession('files', cell, new Script(), async (s) => {
    const r = await s.call('list_folder', { path: '/tmp/project' });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.deepEqual(r.structuredContent, { result: PROJECT_ENTRIES });
    const since = await s.call('list_folder', { path: '/tmp/project', modified_since: '2026-03-01T00:30:00Z' });
    assert.deepEqual(since.structuredContent, { result: PROJECT_ENTRIES.slice(0, 1) });
    assert.equal(
      await s.errorText('list_folder', { path: '/tmp/project', modified_since: 'yesterday' }),
      'Error executing tool list_folder: /modified_since (format): "yesterday" is not a "date-time"',
    );
  });
});
