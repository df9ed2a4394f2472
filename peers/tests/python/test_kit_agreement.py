"""The Python SDK client's view of the Bookshop calls equals the test kit's.

`generated-examples/bookshop/tests/agreement.json` holds the calls and, per protocol era, each
call's `{content, structuredContent, isError}`; the crate's own `tests/agreement.rs` asserts the
kit's results equal it, and this file asserts the Python client's (mcp 2.3.0, over stdio, against
the built binary) do: one file, so neither view can drift from the other.
"""

import json

import pytest
from conftest import LEGACY, MODERN, ROOT, Script, connect, run

AGREEMENT = json.loads((ROOT / "generated-examples/bookshop/tests/agreement.json").read_text())


def view(result) -> dict:
    """A result as agreement.json holds it."""
    return {
        "content": [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in result.content],
        "structuredContent": result.structured_content,
        "isError": bool(result.is_error),
    }


def script_for(call: dict) -> Script:
    script = Script()
    answer = call.get("elicitation")
    if answer is not None:
        if answer["action"] == "accept":
            script.accept(answer["content"])
        else:
            script.answer(answer["action"])
    if "sampled" in call:
        script.sample_text = call["sampled"]
    return script


@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize("call", AGREEMENT["calls"], ids=[c["name"] for c in AGREEMENT["calls"]])
def test_python_client_sees_the_agreed_result(era, call):
    async def body():
        script = script_for(call)
        async with connect("bookshop", "stdio", era, script) as s:
            result = await s.call(call["tool"], call["arguments"])
        assert view(result) == AGREEMENT["results"][era][call["name"]]
        assert script.unscripted == 0
    run(body())


def test_every_call_has_a_result_on_both_eras():
    names = sorted(c["name"] for c in AGREEMENT["calls"])
    for era in (LEGACY, MODERN):
        assert sorted(AGREEMENT["results"][era]) == names, era
