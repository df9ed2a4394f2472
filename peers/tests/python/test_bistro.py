"""Bistro (questions asked from tool bodies through the context) through the Python SDK client.

In-body questions exist on legacy connections only; on 2026-07-28 they fail at once with the
-32600 no-back-channel protocol error (runtime/README.md), and calls that ask nothing work."""

import asyncio
import time

import pytest
from conftest import CELLS, EXPECTED_TOOLS, LEGACY, MODERN, Script, connect, run

DATE_QUESTION = (
    "form",
    "No tables for 2 on 2025-12-25. Would you like to try another date?",
    {
        "description": "Whether to try another date, and which.",
        "type": "object",
        "properties": {
            "accept_alternative": {"type": "boolean", "description": "Try another date?"},
            "date": {"type": "string", "default": "2025-12-26", "description": "Alternative date (YYYY-MM-DD)"},
        },
        "required": ["accept_alternative"],
    },
)
DEPOSIT_QUESTION = ("url", "A 20 EUR deposit confirms your booking.", "https://pay.example.com/deposit/b42", "deposit-b42")
NO_BACK_CHANNEL = "Cannot send '{}': this transport context has no back-channel for server-initiated requests."

cells = pytest.mark.parametrize("transport,era", CELLS)
legacy_cells = pytest.mark.parametrize("transport,era", [c for c in CELLS if c.values[1] == LEGACY])
modern_cells = pytest.mark.parametrize("transport,era", [c for c in CELLS if c.values[1] == MODERN])


@cells
def test_tools_list_is_exact(transport, era):
    async def body():
        async with connect("bistro", transport, era, Script()) as s:
            assert await s.tools() == EXPECTED_TOOLS["bistro"]
    run(body())


@cells
def test_free_date_books_without_a_question(transport, era):
    async def body():
        script = Script()
        async with connect("bistro", transport, era, script) as s:
            assert await s.text("book_table", {"date": "2025-12-27", "party_size": 2}) == \
                "Booked a table for 2 on 2025-12-27."
        assert script.asked == []
    run(body())


@legacy_cells
def test_alternative_date_accepted(transport, era):
    async def body():
        script = Script().accept({"accept_alternative": True, "date": "2025-12-27"})
        async with connect("bistro", transport, era, script) as s:
            assert await s.text("book_table", {"date": "2025-12-25", "party_size": 2}) == \
                "Booked a table for 2 on 2025-12-27."
        assert script.asked == [DATE_QUESTION]
    run(body())


@legacy_cells
def test_alternative_date_default(transport, era):
    async def body():
        script = Script().accept({"accept_alternative": True})
        async with connect("bistro", transport, era, script) as s:
            assert await s.text("book_table", {"date": "2025-12-25", "party_size": 2}) == \
                "Booked a table for 2 on 2025-12-26."
        assert script.asked == [DATE_QUESTION]
    run(body())


@legacy_cells
def test_alternative_refused_declined_cancelled(transport, era):
    async def body():
        script = Script().accept({"accept_alternative": False, "date": "2025-12-27"}).answer("decline").answer("cancel")
        async with connect("bistro", transport, era, script) as s:
            for _ in range(3):
                assert await s.text("book_table", {"date": "2025-12-25", "party_size": 2}) == "No booking made."
        assert script.asked == [DATE_QUESTION] * 3
        assert script.unscripted == 0
    run(body())


@legacy_cells
def test_deposit_accepted(transport, era):
    async def body():
        script = Script().answer("accept")
        async with connect("bistro", transport, era, script) as s:
            assert await s.text("pay_deposit", {"booking_id": "b42"}) == "Complete the payment in your browser."
        assert script.asked == [DEPOSIT_QUESTION]
    run(body())


@legacy_cells
def test_deposit_declined_or_cancelled(transport, era):
    async def body():
        script = Script().answer("decline").answer("cancel")
        async with connect("bistro", transport, era, script) as s:
            for _ in range(2):
                assert await s.text("pay_deposit", {"booking_id": "b42"}) == \
                    "No deposit taken. The booking expires in one hour."
        assert script.asked == [DEPOSIT_QUESTION, DEPOSIT_QUESTION]
    run(body())


@legacy_cells
def test_deposit_completion_notification(transport, era):
    async def body():
        script = Script()
        async with connect("bistro", transport, era, script) as s:
            assert await s.text("confirm_deposit", {"booking_id": "b42"}) == "Deposit received for booking b42."
            expected = [("notifications/elicitation/complete", {"elicitationId": "deposit-b42"})]
            for _ in range(100):
                if script.notifications == expected:
                    break
                await asyncio.sleep(0.02)
            assert script.notifications == expected
        assert script.asked == []
    run(body())


@legacy_cells
def test_url_elicitation_needs_the_capability(transport, era):
    async def body():
        script = Script()
        async with connect("bistro", transport, era, script, capabilities=False) as s:
            assert await s.protocol_error("pay_deposit", {"booking_id": "b42"}) == (
                -32021,
                "Client did not declare the url elicitation capability required by tool 'pay_deposit'",
                {"requiredCapabilities": {"elicitation": {"url": {}}}},
            )
        assert script.asked == []
    run(body())


@modern_cells
def test_modern_in_body_questions_get_the_no_back_channel_error(transport, era):
    async def body():
        script = Script().accept({"accept_alternative": True, "date": "2025-12-27"}).answer("accept")
        async with connect("bistro", transport, era, script) as s:
            started = time.monotonic()
            assert await s.protocol_error("book_table", {"date": "2025-12-25", "party_size": 2}) == \
                (-32600, NO_BACK_CHANNEL.format("elicitation/create"), None)
            assert time.monotonic() - started < 5, "answered at once"
            assert await s.protocol_error("pay_deposit", {"booking_id": "b42"}) == \
                (-32600, NO_BACK_CHANNEL.format("elicitation/create"), None)
            assert await s.protocol_error("confirm_deposit", {"booking_id": "b42"}) == \
                (-32600, NO_BACK_CHANNEL.format("notifications/elicitation/complete"), None)
            # Calls that ask nothing work on the same connection.
            assert await s.text("book_table", {"date": "2025-12-27", "party_size": 2}) == \
                "Booked a table for 2 on 2025-12-27."
        assert script.asked == []
        assert script.notifications == []
    run(body())
