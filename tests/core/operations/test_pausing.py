"""A pause, resume, quarantine or release the routine's state does not allow is refused in
whole sentences, so German says it in German (issue #22), and English as it always did; the
audit keeps the refusal as the person read it (DESIGN §12)."""

from __future__ import annotations

import pytest

from coven_core.errors import ValidationError
from coven_core.integrity import audit
from tests.core.conftest import Engine

CASES = [  # the action before, the action refused, what English and German say
    ("quarantine", "pause", "routine 'a' is quarantined; only an active routine can be paused",
     "die Routine 'a' ist in Quarantäne; nur eine aktive Routine kann pausiert werden"),
    ("quarantine", "resume", "routine 'a' is quarantined; only a paused routine can be resumed",
     "die Routine 'a' ist in Quarantäne; nur eine pausierte Routine kann fortgesetzt werden"),
    ("pause", "quarantine", "routine 'a' is paused; only an active routine can be quarantined",
     "die Routine 'a' ist pausiert; nur eine aktive Routine kann in Quarantäne gestellt werden"),
    ("pause", "release", "routine 'a' is paused; only a quarantined routine can be released",
     "die Routine 'a' ist pausiert; nur eine Routine in Quarantäne kann freigegeben werden"),
]  # fmt: skip


@pytest.mark.parametrize(("before", "refused", "english", "german"), CASES)
def test_an_action_the_state_does_not_allow_is_refused_in_the_readers_language(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    before: str,
    refused: str,
    english: str,
    german: str,
) -> None:
    engine.add("a", "@yearly")
    getattr(engine.operator, before)("a")
    for language, said in (("C.UTF-8", english), ("de_DE.UTF-8", german)):
        monkeypatch.setenv("LC_ALL", language)
        with pytest.raises(ValidationError) as refusal:
            getattr(engine.operator, refused)("a")
        assert str(refusal.value) == said
        with engine.store.read() as conn:
            assert audit.entries(conn, limit=1)[0].result == f"refused: {said}"
