"""Bookshop (plain and asking resolvers) through the Python SDK client, in every cell."""

import pytest
from conftest import CELLS, EXPECTED_TOOLS, LEGACY, MODERN, Script, connect, run

BACKORDER_QUESTION = (
    "form",
    "'Neuromancer' is out of stock (2-3 weeks). Order anyway?",
    {
        "description": "The customer's answer when a title is out of stock.",
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Order anyway and wait?"}},
        "required": ["confirm"],
    },
)
SAMPLE_QUESTION = (
    "sample",
    {
        "messages": [{"role": "user", "content": {"type": "text",
                      "text": "Suggest one scifi book title. Answer with the title only."}}],
        "maxTokens": 50,
    },
)
cells = pytest.mark.parametrize("transport,era", CELLS)


@cells
def test_tools_list_is_exact(transport, era):
    async def body():
        async with connect("bookshop", transport, era, Script()) as s:
            assert await s.tools() == EXPECTED_TOOLS["bookshop"]
    run(body())


@cells
def test_search_books_defaults_and_enum(transport, era):
    async def body():
        script = Script()
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("search_books", {"query": "dune", "limit": 2, "genre": "poetry"}) == \
                "Found 3 books matching 'dune' in poetry (showing up to 2)."
            assert await s.text("search_books", {"query": "dune"}) == \
                "Found 3 books matching 'dune' (showing up to 10)."
        assert script.asked == []
    run(body())


@cells
def test_invalid_arguments(transport, era):
    async def body():
        script = Script()
        async with connect("bookshop", transport, era, script) as s:
            assert await s.error_text("search_books", {"query": "dune", "limit": 99}) == \
                "Error executing tool search_books: /limit (maximum): 99 is greater than the maximum of 50"
            assert await s.error_text("add_book", {"book": {"title": "Dune", "author": "Frank Herbert", "year": 1400}}) == \
                "Error executing tool add_book: /book/year (minimum): 1400 is less than the minimum of 1450"
            all_errors = await s.error_text("search_books", {"limit": 0, "genre": "horror"})
            prefix = "Error executing tool search_books: "
            assert all_errors.startswith(prefix)
            assert sorted(all_errors[len(prefix):].split("\n")) == [
                '(root) (required): "query" is a required property',
                '/genre (enum): "horror" is not one of "fiction", "non-fiction" or "poetry"',
                "/limit (minimum): 0 is less than the minimum of 1",
            ]
            # A resolver-backed tool with invalid arguments asks nothing.
            assert await s.error_text("order_book", {"title": 3}) == \
                'Error executing tool order_book: /title (type): 3 is not of type "string"'
            assert await s.text("search_books", {"query": "dune", "limit": 50}) == \
                "Found 3 books matching 'dune' (showing up to 50)."
        assert script.asked == []
    run(body())


@cells
def test_add_book(transport, era):
    async def body():
        async with connect("bookshop", transport, era, Script()) as s:
            assert await s.text("add_book", {"book": {"title": "Dune", "author": "Frank Herbert", "year": 1965}}) == \
                "Added 'Dune' by Frank Herbert (1965)."
    run(body())


@cells
def test_reserve_book_resolves_stock_without_asking(transport, era):
    async def body():
        script = Script()
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("reserve_book", {"title": "Dune"}) == "Reserved 'Dune' (6 copies left)."
            assert await s.text("reserve_book", {"title": "Neuromancer"}) == "'Neuromancer' is out of stock."
            # A value sent for the resolved parameter is ignored.
            assert await s.text("reserve_book", {"title": "Neuromancer",
                                                 "stock": {"title": "Neuromancer", "copies": 99}}) == \
                "'Neuromancer' is out of stock."
        assert script.asked == []
    run(body())


@cells
def test_order_book_in_stock_asks_nothing(transport, era):
    async def body():
        script = Script()
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("order_book", {"title": "Dune"}) == "Ordered 'Dune'; it arrives tomorrow."
        assert script.asked == []
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_order_book_backorder_accepted(transport, era):
    async def body():
        script = Script().accept({"confirm": True})
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("order_book", {"title": "Neuromancer"}) == \
                "Backordered 'Neuromancer'; it ships in 2-3 weeks."
        assert script.asked == [BACKORDER_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_order_book_backorder_refused(transport, era):
    async def body():
        script = Script().accept({"confirm": False})
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("order_book", {"title": "Neuromancer"}) == "No order placed."
        assert script.asked == [BACKORDER_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_order_book_backorder_declined_or_cancelled(transport, era):
    async def body():
        script = Script().answer("decline").answer("cancel")
        async with connect("bookshop", transport, era, script) as s:
            assert await s.error_text("order_book", {"title": "Neuromancer"}) == \
                "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was decline"
            assert await s.error_text("order_book", {"title": "Neuromancer"}) == \
                "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was cancel"
            assert await s.text("order_book", {"title": "Dune"}) == "Ordered 'Dune'; it arrives tomorrow."
        assert script.asked == [BACKORDER_QUESTION, BACKORDER_QUESTION]
        assert script.unscripted == 0
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_order_book_answer_not_matching_the_form(transport, era):
    async def body():
        script = Script().accept({"confirm": "yes"})
        async with connect("bookshop", transport, era, script) as s:
            # The Python SDK's wording differs by era (shared/reference/mcp-protocol.md §2.4).
            resolver = "Resolver 'confirm_backorder': Received" if era == LEGACY else "Resolver 'confirm_backorder' received"
            assert await s.error_text("order_book", {"title": "Neuromancer"}) == (
                f"Error executing tool order_book: {resolver} an accepted elicitation whose content "
                'does not match the requested schema: /confirm (type): "yes" is not of type "boolean"')
        assert script.asked == [BACKORDER_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_recommend_book_samples(transport, era):
    async def body():
        script = Script()
        script.sample_text = "Dune"
        async with connect("bookshop", transport, era, script) as s:
            assert await s.text("recommend_book", {"genre": "scifi"}) == "Today's scifi pick: Dune"
        assert script.asked == [SAMPLE_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_missing_client_capabilities_give_32021(transport, era):
    async def body():
        script = Script()
        async with connect("bookshop", transport, era, script, capabilities=False) as s:
            assert await s.protocol_error("order_book", {"title": "Neuromancer"}) == (
                -32021,
                "Client did not declare the form elicitation capability required by resolver 'confirm_backorder'",
                {"requiredCapabilities": {"elicitation": {"form": {}}}},
            )
            assert await s.protocol_error("recommend_book", {"genre": "scifi"}) == (
                -32021,
                "Client did not declare the sampling capability required by resolver 'suggest_title'",
                {"requiredCapabilities": {"sampling": {}}},
            )
            # No question needed, no capability needed.
            assert await s.text("order_book", {"title": "Dune"}) == "Ordered 'Dune'; it arrives tomorrow."
        assert script.asked == []
    run(body())


@cells
def test_unknown_tool_is_a_protocol_error(transport, era):
    async def body():
        async with connect("bookshop", transport, era, Script()) as s:
            assert await s.protocol_error("nope", {}) == (-32602, "Unknown tool: nope", None)
            assert await s.text("reserve_book", {"title": "Dune"}) == "Reserved 'Dune' (6 copies left)."
    run(body())
