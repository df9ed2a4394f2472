// Bookshop (plain and asking resolvers) through the TypeScript v2 client, in every cell.
import assert from 'node:assert/strict';
import { EXPECTED_TOOLS, LEGACY, Script, overCells, withSession } from './harness.mjs';

const BACKORDER_QUESTION = {
  form: {
    message: "'Neuromancer' is out of stock (2-3 weeks). Order anyway?",
    schema: {
      description: "The customer's answer when a title is out of stock.",
      type: 'object',
      properties: { confirm: { type: 'boolean', description: 'Order anyway and wait?' } },
      required: ['confirm'],
    },
  },
};
const SAMPLE_QUESTION = {
  sample: {
    messages: [{ role: 'user', content: { type: 'text', text: 'Suggest one scifi book title. Answer with the title only.' } }],
    maxTokens: 50,
  },
};

overCells('bookshop tools/list is exact', {}, async (cell) => {
  await withSession('bookshop', cell, new Script(), async (s) => {
    assert.deepEqual(await s.tools(), EXPECTED_TOOLS.bookshop);
  });
});

overCells('bookshop search_books with defaults and enum', {}, async (cell) => {
  const script = new Script();
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('search_books', { query: 'dune', limit: 2, genre: 'poetry' }),
      "Found 3 books matching 'dune' in poetry (showing up to 2).");
    assert.equal(await s.text('search_books', { query: 'dune' }), "Found 3 books matching 'dune' (showing up to 10).");
  });
  assert.deepEqual(script.asked, []);
});

overCells('bookshop invalid arguments are reported', {}, async (cell) => {
  const script = new Script();
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.errorText('search_books', { query: 'dune', limit: 99 }),
      'Error executing tool search_books: /limit (maximum): 99 is greater than the maximum of 50');
    assert.equal(await s.errorText('add_book', { book: { title: 'Dune', author: 'Frank Herbert', year: 1400 } }),
      'Error executing tool add_book: /book/year (minimum): 1400 is less than the minimum of 1450');
    const all = await s.errorText('search_books', { limit: 0, genre: 'horror' });
    const prefix = 'Error executing tool search_books: ';
    assert.ok(all.startsWith(prefix), all);
    assert.deepEqual(all.slice(prefix.length).split('\n').sort(), [
      '(root) (required): "query" is a required property',
      '/genre (enum): "horror" is not one of "fiction", "non-fiction" or "poetry"',
      '/limit (minimum): 0 is less than the minimum of 1',
    ]);
    assert.equal(await s.errorText('order_book', { title: 3 }), 'Error executing tool order_book: /title (type): 3 is not of type "string"');
    assert.equal(await s.text('search_books', { query: 'dune', limit: 50 }), "Found 3 books matching 'dune' (showing up to 50).");
  });
  assert.deepEqual(script.asked, []);
});

overCells('bookshop add_book', {}, async (cell) => {
  await withSession('bookshop', cell, new Script(), async (s) => {
    assert.equal(await s.text('add_book', { book: { title: 'Dune', author: 'Frank Herbert', year: 1965 } }),
      "Added 'Dune' by Frank Herbert (1965).");
  });
});

overCells('bookshop reserve_book resolves stock without asking', {}, async (cell) => {
  const script = new Script();
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('reserve_book', { title: 'Dune' }), "Reserved 'Dune' (6 copies left).");
    assert.equal(await s.text('reserve_book', { title: 'Neuromancer' }), "'Neuromancer' is out of stock.");
    assert.equal(await s.text('reserve_book', { title: 'Neuromancer', stock: { title: 'Neuromancer', copies: 99 } }),
      "'Neuromancer' is out of stock.");
  });
  assert.deepEqual(script.asked, []);
});

overCells('bookshop order_book in stock asks nothing', {}, async (cell) => {
  const script = new Script();
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('order_book', { title: 'Dune' }), "Ordered 'Dune'; it arrives tomorrow.");
  });
  assert.deepEqual(script.asked, []);
});

overCells('bookshop order_book backorder accepted', { needsMrtr: true }, async (cell) => {
  const script = new Script().accept({ confirm: true });
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('order_book', { title: 'Neuromancer' }), "Backordered 'Neuromancer'; it ships in 2-3 weeks.");
  });
  assert.deepEqual(script.asked, [BACKORDER_QUESTION]);
});

overCells('bookshop order_book backorder refused', { needsMrtr: true }, async (cell) => {
  const script = new Script().accept({ confirm: false });
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('order_book', { title: 'Neuromancer' }), 'No order placed.');
  });
  assert.deepEqual(script.asked, [BACKORDER_QUESTION]);
});

overCells('bookshop order_book backorder declined or cancelled', { needsMrtr: true }, async (cell) => {
  const script = new Script().answer('decline').answer('cancel');
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.errorText('order_book', { title: 'Neuromancer' }),
      "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was decline");
    assert.equal(await s.errorText('order_book', { title: 'Neuromancer' }),
      "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was cancel");
    assert.equal(await s.text('order_book', { title: 'Dune' }), "Ordered 'Dune'; it arrives tomorrow.");
  });
  assert.deepEqual(script.asked, [BACKORDER_QUESTION, BACKORDER_QUESTION]);
  assert.equal(script.unscripted, 0);
});

overCells('bookshop order_book answer not matching the form', { needsMrtr: true }, async (cell) => {
  const script = new Script().accept({ confirm: 'yes' });
  await withSession('bookshop', cell, script, async (s) => {
    // The Python SDK's wording differs by era (shared/reference/mcp-protocol.md §2.4): legacy
    // "Resolver '<key>': Received ...", MRTR "Resolver '<key>' received ...".
    const prefix = cell.era === LEGACY ? "Resolver 'confirm_backorder': Received" : "Resolver 'confirm_backorder' received";
    assert.equal(await s.errorText('order_book', { title: 'Neuromancer' }),
      `Error executing tool order_book: ${prefix} an accepted elicitation whose content does not match the requested schema: /confirm (type): "yes" is not of type "boolean"`);
  });
  assert.deepEqual(script.asked, [BACKORDER_QUESTION]);
});

overCells('bookshop recommend_book samples', { needsMrtr: true }, async (cell) => {
  const script = new Script().sample('Dune');
  await withSession('bookshop', cell, script, async (s) => {
    assert.equal(await s.text('recommend_book', { genre: 'scifi' }), "Today's scifi pick: Dune");
  });
  assert.deepEqual(script.asked, [SAMPLE_QUESTION]);
});

overCells('bookshop missing client capabilities give -32021', { needsMrtr: true }, async (cell) => {
  const script = new Script();
  await withSession('bookshop', cell, script, async (s) => {
    assert.deepEqual(await s.protocolError('order_book', { title: 'Neuromancer' }), {
      code: -32021,
      message: "Client did not declare the form elicitation capability required by resolver 'confirm_backorder'",
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    assert.deepEqual(await s.protocolError('recommend_book', { genre: 'scifi' }), {
      code: -32021,
      message: "Client did not declare the sampling capability required by resolver 'suggest_title'",
      data: { requiredCapabilities: { sampling: {} } },
    });
    assert.equal(await s.text('order_book', { title: 'Dune' }), "Ordered 'Dune'; it arrives tomorrow.");
  }, {});
  assert.deepEqual(script.asked, []);
});

overCells('bookshop unknown tool is a protocol error', {}, async (cell) => {
  await withSession('bookshop', cell, new Script(), async (s) => {
    assert.deepEqual(await s.protocolError('nope', {}), { code: -32602, message: 'Unknown tool: nope', data: undefined });
    assert.equal(await s.text('reserve_book', { title: 'Dune' }), "Reserved 'Dune' (6 copies left).");
  });
});
