"""The detector's cells between batches, over the Faust table's in-memory mapping.

The table (its changelog) stays the source of truth: every changed cell is written to it
once per batch as plain JSON, which is what recovery and a rebalance read back. Alongside:

* *hot* cells, the pending ones (still waiting for an agent), are also kept decoded, so the
  next answer of a cell does not decode it again. A decoded cell is trusted only while the
  table still holds the very bytes object it was decoded from: recovery or a rebalance
  replaces the value, and the cell is then decoded from the new bytes.
* *cold* cells (decided ones, and pending ones pushed out of the bounded hot set) are
  compressed in groups of :data:`BLOCK_CELLS` with zstd level 1: one call for a group costs
  a small part of one call per cell and the group compresses far better (figures, and
  zlib's and lz4's: docs/architecture.md). The table
  then holds a small :class:`ColdRef` for the cell (in memory only; the changelog keeps the
  plain JSON). Reading a cold cell decompresses its group once (the last group is kept).

No Kafka here: the Faust edge sends the changelog records :meth:`CellStore.write` returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Protocol

import zstandard

from streams.detect.state import CellState, DetectConfig, DueIndex

#: Pending cells kept decoded (about 7 KB each with evidence and rationales).
HOT_MAX = 2048
#: Cold cells compressed together.
BLOCK_CELLS = 64
#: One compressor and decompressor per process: building a zstd context costs more than
#: compressing a group of cells with it. They are not thread-safe: every cell store is used
#: from the event loop's thread only. The frames carry their size (one-shot decompress).
_PACK = zstandard.ZstdCompressor(level=1)
_UNPACK = zstandard.ZstdDecompressor()
#: A changelog record: (partition, key, value; ``None`` deletes the cell).
ChangelogRecord = tuple[int, bytes, bytes | None]


class Change(Protocol):
    """A changed cell (:class:`streams.detect.batch.Changed`)."""

    @property
    def partition(self) -> int: ...
    @property
    def raw(self) -> bytes: ...
    @property
    def state(self) -> CellState | None: ...


class ColdBlock:
    __slots__ = ("blob",)

    def __init__(self, blob: bytes) -> None:
        self.blob = blob


class ColdRef:
    """A cold cell in the table: its stored bytes are ``block``'s [start:end]."""

    __slots__ = ("block", "end", "start")

    def __init__(self, block: ColdBlock, start: int, end: int) -> None:
        self.block, self.start, self.end = block, start, end


class CellStore:
    def __init__(self, data: MutableMapping[bytes, Any], cfg: DetectConfig,
                 hot_max: int = HOT_MAX, block_cells: int = BLOCK_CELLS) -> None:
        self.data = data
        self.index = DueIndex(cfg)
        self.hot_max, self.block_cells = hot_max, block_cells
        self._hot: dict[bytes, tuple[Any, CellState]] = {}  # oldest first
        self._cooling: dict[bytes, bytes] = {}
        #: The stored object each index entry was computed from (a rebuild skips those).
        self._noted: dict[bytes, Any] = {}
        self._unpacked: tuple[ColdBlock | None, bytes] = (None, b"")

    def load(self, key: bytes) -> CellState | None:
        stored = self.data.get(key)
        if stored is None:
            return None
        hit = self._hot.get(key)
        if hit is not None and hit[0] is stored:
            return hit[1]
        return CellState.loads(self.stored_bytes(stored))

    def stored_bytes(self, stored: Any) -> bytes:
        """A table value as the changelog holds it (plain JSON)."""
        if not isinstance(stored, ColdRef):
            return bytes(stored)
        block, text = self._unpacked
        if block is not stored.block:
            text = _UNPACK.decompress(stored.block.blob)
            self._unpacked = (stored.block, text)
        return text[stored.start:stored.end]

    def write(self, changed: Mapping[bytes, Change]) -> list[ChangelogRecord]:
        """Store a batch's changed cells; returns the changelog records to send."""
        records: list[ChangelogRecord] = []
        hot, cooling, data, noted = self._hot, self._cooling, self.data, self._noted
        note = self.index.note
        for key, ch in changed.items():  # per changed cell per batch: locals, no lookups
            hot.pop(key, None)
            cooling.pop(key, None)
            state = ch.state
            if state is None:  # purged
                if data.pop(key, None) is not None:
                    records.append((ch.partition, key, None))
                noted.pop(key, None)
            else:
                raw = ch.raw
                data[key] = noted[key] = raw
                records.append((ch.partition, key, raw))
                if state.decided_at is not None:
                    cooling[key] = raw
                else:
                    hot[key] = (raw, state)
            note(key, state)
        while len(self._hot) > self.hot_max:
            oldest = next(iter(self._hot))
            self._cooling[oldest] = self._hot.pop(oldest)[0]
        if len(self._cooling) >= self.block_cells:
            self._freeze()
        return records

    def _freeze(self) -> None:
        """Compress the cooling cells (those still holding what was written) as one block."""
        kept = [(k, raw) for k, raw in self._cooling.items() if self.data.get(k) is raw]
        self._cooling.clear()
        if not kept:
            return
        # A copy of exactly the compressed size: zstd writes into a buffer of the input's
        # bound and then shrinks it in place, which left a hole the size of the group behind
        # every kept block (RSS 13.4 MB per 10,000 cells instead of 7.8 with zlib).
        packed = _PACK.compress(b"".join(raw for _, raw in kept))
        block = ColdBlock(bytes(memoryview(packed)))
        start = 0
        for key, raw in kept:
            ref = ColdRef(block, start, start + len(raw))
            start = ref.end
            self.data[key] = ref
            if self._noted.get(key) is raw:
                self._noted[key] = ref

    def rebuild_index(self) -> None:
        """Bring the due index up to date with the table: cells restored from the changelog
        (a restart, a rebalance) are decoded once; cells written by this store are known."""
        for key, stored in list(self.data.items()):
            if self._noted.get(key) is not stored:
                self.index.note(key, CellState.loads(self.stored_bytes(stored)))
                self._noted[key] = stored
        for key in [k for k in self._noted if k not in self.data]:
            del self._noted[key]
            self.index.note(key, None)

    def items(self) -> Iterator[tuple[bytes, CellState]]:
        """Every stored cell, decoded (for tests and tools)."""
        for key in list(self.data):
            state = self.load(key)
            if state is not None:
                yield key, state

    def __len__(self) -> int:
        return len(self.data)
