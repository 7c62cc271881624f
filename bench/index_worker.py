"""What running Chroma in a worker process costs (docs/adr/0003-index-heap-bytes.md).

Measures, with the local MiniLM embeddings and the demo-sized index of tests/test_search_index.py:

- start: from launching the worker to its first answer (interpreter, ``import chromadb``, client);
- stop: ``close()`` until the worker has exited;
- per query: a whole ``search_workflows`` call (embedding the query included), the worker's part
  of it (the ``count`` and ``query`` round trips, vector given) and the same two Chroma calls made
  in this process on the same directory; the difference is the cost of the hop.

    .venv/bin/python bench/index_worker.py [--starts 10] [--queries 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.adapters.search.chroma_index import WORKFLOWS, ChromaSearchIndex
from desktop_app.adapters.search.embeddings import MiniLMEmbeddingFunction
from desktop_app.adapters.search.worker import IndexWorker
from tests.test_search_index import ALL

QUERIES = (
    "reserve airline tickets",
    "add a new customer record to the sales database",
    "get my travel costs reimbursed",
    "help someone who forgot their login credentials",
    "make a dessert for a birthday",
)


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    ef = MiniLMEmbeddingFunction()
    ef(["warm up the model"])
    path = Path(tempfile.mkdtemp(prefix="procedura-bench-")) / "chroma"
    with ChromaSearchIndex(path, ef) as idx:
        idx.upsert_workflows(ALL)

    starts, stops = [], []
    for _ in range(args.starts):
        began = time.perf_counter()
        worker = IndexWorker(path)
        worker.call("open", "open", name=WORKFLOWS, metadata={})
        starts.append(time.perf_counter() - began)
        began = time.perf_counter()
        worker.stop()
        stops.append(time.perf_counter() - began)

    vectors = [ef([q])[0] for q in QUERIES]
    searches, hops = [], []
    with ChromaSearchIndex(path, ef) as idx:
        idx.count()  # started and opened
        worker = idx._worker
        assert worker is not None
        for i in range(args.queries):
            began = time.perf_counter()
            idx.search_workflows(QUERIES[i % len(QUERIES)])
            searches.append(time.perf_counter() - began)
            began = time.perf_counter()
            worker.call("search", "count", name=WORKFLOWS)
            worker.call("search", "query", name=WORKFLOWS, vector=vectors[i % 5], n=5, where=None)
            hops.append(time.perf_counter() - began)

    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(str(path), Settings(anonymized_telemetry=False))
    collection = client.get_collection(WORKFLOWS, embedding_function=None)
    local = []
    for i in range(args.queries):
        began = time.perf_counter()
        collection.count()
        collection.query(query_embeddings=[vectors[i % 5]], n_results=5, include=["distances"])
        local.append(time.perf_counter() - began)
    client.close()

    overhead = statistics.median(hops) - statistics.median(local)
    rows = [
        (f"worker start, to its first answer (median of {args.starts})", ms(starts)),
        (f"worker stop, close() until it exited (median of {args.starts})", ms(stops)),
        (f"search_workflows, embedding included (median of {args.queries})", ms(searches)),
        (f"count + query through the worker (median of {args.queries})", ms(hops)),
        (f"count + query in this process (median of {args.queries})", ms(local)),
        ("the hop's cost per search", f"{overhead * 1000:.2f} ms"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value:>10}")


if __name__ == "__main__":
    main()
