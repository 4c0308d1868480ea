"""The confirmation that ends every knowledge merge: ``{updated_files, update_summary}``.

The LLM must end its tool loop with exactly this JSON object; ``parse_confirmation``
checks it strictly (and that every listed file was really written by the loop). The
deterministic fallback builds the same object, so the writer treats both alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent_client.merge.paths import as_the_vault_spells
from shared.control_chars import without_controls
from shared.graphemes import cut_chars

# The notice's summary is one line the host's chat agent may read: what a model says
# beyond this is cut (its endpoint may send up to 8 MiB of it).
MAX_SUMMARY_CHARS = 500
_FENCED = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", re.S)


@dataclass(frozen=True)
class Confirmation:
    updated_files: list[str]
    update_summary: str


def parse_confirmation(
    text: str, written: list[str], refused: dict[str, str] | None = None
) -> Confirmation:
    """Parse the model's final message; ``ValueError`` saying what is wrong with it
    (``refused``: the last refusal of a write, by path, said for a file claimed)."""
    text = text.strip()
    fenced = _FENCED.match(text)
    if fenced:  # tolerated: a lone ```json fence around the object
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the final message is not JSON ({exc.msg} at {exc.pos})") from None
    except RecursionError:  # (nested thousands deep: json's parser gives up)
        raise ValueError("the final message is JSON nested too deep") from None
    if not isinstance(data, dict) or set(data) != {"updated_files", "update_summary"}:
        raise ValueError(
            "the confirmation must be an object with exactly updated_files and update_summary"
        )
    files, summary = data["updated_files"], data["update_summary"]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError("updated_files must be a list of vault paths")
    files = list(dict.fromkeys(as_the_vault_spells(f) for f in files))
    if written and not files:
        raise ValueError(f"updated_files is empty but this merge wrote {written}")
    if not isinstance(summary, str) or not one_line(summary):
        raise ValueError("update_summary must be a non-empty string")
    unknown = [f for f in files if f not in written]
    if unknown:
        why = [f"{f}: {refused[f]}" for f in unknown if refused and f in refused]
        said = f" (the vault refused their writes: {'; '.join(why)})" if why else ""
        raise ValueError(f"updated_files lists files this merge did not write: {unknown}{said}")
    missing = [f for f in written if f not in files]
    return Confirmation(updated_files=[*files, *missing], update_summary=one_line(summary))


def one_line(summary: str) -> str:
    """The model's ``update_summary`` as the notice's one line: its controls and bidi
    overrides dropped, every run of white space (line breaks too) one space, cut to
    ``MAX_SUMMARY_CHARS`` where a character ends."""
    return cut_chars(" ".join(without_controls(summary).split()), MAX_SUMMARY_CHARS, "…")
