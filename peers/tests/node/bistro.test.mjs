// Bistro (questions asked from tool bodies through the context) through the TypeScript v2 client.
// In-body questions exist on legacy connections only; on 2026-07-28 they fail at once with the
// -32600 no-back-channel protocol error (runtime/README.md), and calls that ask nothing work.
import assert from 'node:assert/strict';
import { CELLS, EXPECTED_TOOLS, LEGACY, MODERN, Script, eventually, overCells, withSession } from './harness.mjs';

const legacyCells = CELLS.filter((c) => c.era === LEGACY);
const modernCells = CELLS.filter((c) => c.era === MODERN);
const DATE_QUESTION = {
  form: {
    message: 'No tables for 2 on 2025-12-25. Would you like to try another date?',
    schema: {
      description: 'Whether to try another date, and which.',
      type: 'object',
      properties: {
        accept_alternative: { type: 'boolean', description: 'Try another date?' },
        date: { type: 'string', default: '2025-12-26', description: 'Alternative date (YYYY-MM-DD)' },
      },
      required: ['accept_alternative'],
    },
  },
};
const DEPOSIT_QUESTION = {
  url: { message: 'A 20 EUR deposit confirms your booking.', url: 'https://pay.example.com/deposit/b42', id: 'deposit-b42' },
};
const noBackChannel = (method) =>
  `Cannot send '${method}': this transport context has no back-channel for server-initiated requests.`;

overCells('bistro tools/list is exact', {}, async (cell) => {
  await withSession('bistro', cell, new Script(), async (s) => {
    assert.deepEqual(await s.tools(), EXPECTED_TOOLS.bistro);
  });
});

overCells('bistro free date books without a question', {}, async (cell) => {
  const script = new Script();
  await withSession('bistro', cell, script, async (s) => {
    assert.equal(await s.text('book_table', { date: '2025-12-27', party_size: 2 }), 'Booked a table for 2 on 2025-12-27.');
  });
  assert.deepEqual(script.asked, []);
});

overCells('bistro alternative date accepted', {}, async (cell) => {
  const script = new Script().accept({ accept_alternative: true, date: '2025-12-27' });
  await withSession('bistro', cell, script, async (s) => {
    assert.equal(await s.text('book_table', { date: '2025-12-25', party_size: 2 }), 'Booked a table for 2 on 2025-12-27.');
  });
  assert.deepEqual(script.asked, [DATE_QUESTION]);
}, legacyCells);

overCells('bistro alternative date default', {}, async (cell) => {
  const script = new Script().accept({ accept_alternative: true });
  await withSession('bistro', cell, script, async (s) => {
    assert.equal(await s.text('book_table', { date: '2025-12-25', party_size: 2 }), 'Booked a table for 2 on 2025-12-26.');
  });
  assert.deepEqual(script.asked, [DATE_QUESTION]);
}, legacyCells);

overCells('bistro alternative refused, declined, cancelled', {}, async (cell) => {
  const script = new Script().accept({ accept_alternative: false, date: '2025-12-27' }).answer('decline').answer('cancel');
  await withSession('bistro', cell, script, async (s) => {
    for (let i = 0; i < 3; i++) {
      assert.equal(await s.text('book_table', { date: '2025-12-25', party_size: 2 }), 'No booking made.');
    }
  });
  assert.deepEqual(script.asked, [DATE_QUESTION, DATE_QUESTION, DATE_QUESTION]);
  assert.equal(script.unscripted, 0);
}, legacyCells);

overCells('bistro deposit accepted', {}, async (cell) => {
  const script = new Script().answer('accept');
  await withSession('bistro', cell, script, async (s) => {
    assert.equal(await s.text('pay_deposit', { booking_id: 'b42' }), 'Complete the payment in your browser.');
  });
  assert.deepEqual(script.asked, [DEPOSIT_QUESTION]);
}, legacyCells);

overCells('bistro deposit declined or cancelled', {}, async (cell) => {
  const script = new Script().answer('decline').answer('cancel');
  await withSession('bistro', cell, script, async (s) => {
    for (let i = 0; i < 2; i++) {
      assert.equal(await s.text('pay_deposit', { booking_id: 'b42' }), 'No deposit taken. The booking expires in one hour.');
    }
  });
  assert.deepEqual(script.asked, [DEPOSIT_QUESTION, DEPOSIT_QUESTION]);
}, legacyCells);

overCells('bistro deposit completion notification', {}, async (cell) => {
  const script = new Script();
  await withSession('bistro', cell, script, async (s) => {
    assert.equal(await s.text('confirm_deposit', { booking_id: 'b42' }), 'Deposit received for booking b42.');
    const expected = [['notifications/elicitation/complete', { elicitationId: 'deposit-b42' }]];
    await eventually(() => script.notifications.length >= 1);
    assert.deepEqual(script.notifications, expected);
  });
  assert.deepEqual(script.asked, []);
}, legacyCells);

overCells('bistro URL elicitation needs the url capability', {}, async (cell) => {
  const script = new Script();
  await withSession('bistro', cell, script, async (s) => {
    assert.deepEqual(await s.protocolError('pay_deposit', { booking_id: 'b42' }), {
      code: -32021,
      message: "Client did not declare the url elicitation capability required by tool 'pay_deposit'",
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
  }, { elicitation: { form: {} } });
  assert.deepEqual(script.asked, []);
}, legacyCells);

overCells('bistro in-body questions on 2026-07-28 get the no-back-channel error', {}, async (cell) => {
  const script = new Script().accept({ accept_alternative: true, date: '2025-12-27' }).answer('accept');
  await withSession('bistro', cell, script, async (s) => {
    const started = Date.now();
    assert.deepEqual(await s.protocolError('book_table', { date: '2025-12-25', party_size: 2 }),
      { code: -32600, message: noBackChannel('elicitation/create'), data: undefined });
    assert.ok(Date.now() - started < 5000, 'answered at once');
    assert.deepEqual(await s.protocolError('pay_deposit', { booking_id: 'b42' }),
      { code: -32600, message: noBackChannel('elicitation/create'), data: undefined });
    assert.deepEqual(await s.protocolError('confirm_deposit', { booking_id: 'b42' }),
      { code: -32600, message: noBackChannel('notifications/elicitation/complete'), data: undefined });
    assert.equal(await s.text('book_table', { date: '2025-12-27', party_size: 2 }), 'Booked a table for 2 on 2025-12-27.');
  });
  assert.deepEqual(script.asked, []);
  assert.deepEqual(script.notifications, []);
}, modernCells);
