"""Command line of the benchmarks: ``python -m bench {locomo-recall,retain,consolidation,refresh-cost,freshness,
mm-quality,scale,operators,gate-calibration,load,knowledge-base,transfer,recall-latency,parsers,answers,
chunk-neighbours} ...``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    recall = sub.add_parser("locomo-recall", help="evidence hit@k of dense, bm25 and hybrid recall on LoCoMo files")
    recall.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="LoCoMo conversation JSON files")
    recall.add_argument("--k", nargs="+", type=int, default=[1, 5, 10], help="cut-offs (default: 1 5 10)")
    recall.add_argument("--json", type=Path, default=None, help="report path (default: bench/results/)")
    recall.add_argument("--ablations", action="store_true", help="also score the intermediate hybrid configurations")
    recall.add_argument(
        "--index-variant",
        choices=["plain", "prev-turn"],
        default="plain",
        help="bench-only experiment: embed each turn with its preceding turn (prev-turn)",
    )
    recall.add_argument("--candidates", type=int, default=None, help="candidates per retriever (default: setting)")

    retain = sub.add_parser("retain", help="time retaining one whole LoCoMo conversation into a fresh database")
    retain.add_argument("path", type=Path, metavar="PATH", help="a LoCoMo conversation JSON file")
    retain.add_argument("--repeat", type=int, default=3, help="timed runs, each into a fresh database (default 3)")
    retain.add_argument("--json", type=Path, default=None, help="report path (default bench/results/retain.json)")
    cons = sub.add_parser(
        "consolidation",
        help="observations the offline consolidator forms (evidence coverage, small talk, labelled paraphrases and "
        "near misses) and what forming them costs turn by turn",
    )
    cons.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="LoCoMo conversation JSON files")
    cons.add_argument("--database-url", default=None, help="a postgresql:// URL (default: temporary SQLite files)")
    cons.add_argument(
        "--skip", nargs="*", default=[], choices=["quality", "labelled", "cost", "throughput"], help="parts not to run"
    )
    cons.add_argument("--json", type=Path, default=None, help="report path (default bench/results/consolidation.json)")
    cons.add_argument(
        "--before-src",
        type=Path,
        default=None,
        help="src folder of another tree: retain throughput of both, alternating in this run (median of 5 each)",
    )
    cost = sub.add_parser(
        "refresh-cost",
        help="synthesis input per refresh, delta vs full, session by session; or (--failing-provider) the LLM calls "
        "a provider that always times out costs over a simulated day",
    )
    cost.add_argument(
        "path", type=Path, metavar="PATH", nargs="?", help="a LoCoMo conversation JSON file (e.g. conv-41)"
    )
    cost.add_argument(
        "--failing-provider", action="store_true",
        help="instead: a simulated day (injected clock) with a write in scope every 30 s and an LLM provider that "
        "always times out, on SQLite and (with --database-url or MINDBANK_TEST_POSTGRES_URL) PostgreSQL",
    )  # fmt: skip
    cost.add_argument("--hours", type=float, default=24.0, help="--failing-provider: simulated hours (default 24)")
    cost.add_argument("--database-url", default=None, help="--failing-provider: a postgresql:// URL")
    cost.add_argument(
        "--recall-max-tokens", type=int, default=None, metavar="N",
        help="the model's trigger.recall_max_tokens (default: unset, i.e. the 2048-token default)",
    )  # fmt: skip
    cost.add_argument(
        "--json", type=Path, default=None,
        help="report path (default bench/results/refresh-cost.json, or refresh-cost-recallN.json with a budget)",
    )  # fmt: skip

    fresh = sub.add_parser("freshness", help="lag from retain to an auto-refreshing model citing the memory")
    fresh.add_argument("path", type=Path, metavar="PATH", help="a LoCoMo conversation JSON file")
    fresh.add_argument("--json", type=Path, default=None, help="report path (default bench/results/freshness.json)")

    quality = sub.add_parser("mm-quality", help="mental-model briefings: evidence vs random, bullets, churn, time")
    quality.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="LoCoMo conversation JSON files")
    quality.add_argument("--churn", default=None, metavar="ID", help="conversation for delta churn (default conv-41)")
    quality.add_argument("--timing", default=None, metavar="ID", help="conversation for refresh time (default conv-43)")
    quality.add_argument("--repeat", type=int, default=5, help="timed full refreshes (default 5)")
    quality.add_argument(
        "--skip", nargs="*", default=[], choices=["quality", "churn", "timing"], help="parts not to run"
    )
    quality.add_argument("--json", type=Path, default=None, help="report path (default bench/results/mm-quality.json)")

    answers = sub.add_parser("answers", help="one model per LoCoMo question: does it cite the evidence, vs /recall")
    answers.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="LoCoMo conversation JSON files")
    answers.add_argument("--questions", type=int, default=30, help="questions sampled per conversation (default 30)")
    answers.add_argument(
        "--after", action="store_true", help="also: evidence retained after the model's refresh, gated and quoted?"
    )
    answers.add_argument("--only-after", action="store_true", help="run the --after part alone")
    answers.add_argument(
        "--pages", action="store_true", help="also: a knowledge page per question (default trigger, 2048 tokens)"
    )
    answers.add_argument("--json", type=Path, default=None, help="report path (default bench/results/answers.json)")

    gate = sub.add_parser("gate-calibration", help="the relevance gate's precision/recall on a labelled LoCoMo set")
    gate.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="LoCoMo files (default: ../shared/data/locomo)"
    )
    gate.add_argument(
        "--json", type=Path, default=None, help="report path (default bench/results/gate-calibration.json)"
    )

    chunks = sub.add_parser(
        "chunk-neighbours", help="CPU and wall of include.chunks with and without neighbours, over one conversation"
    )
    chunks.add_argument("path", type=Path, metavar="PATH", help="a LoCoMo conversation JSON file")
    chunks.add_argument(
        "--database", default=None,
        help="a SQLite path or postgresql:// URL whose bank is reused (default: a temporary SQLite file)",
    )  # fmt: skip
    chunks.add_argument("--questions", type=int, default=60, help="questions recalled (default 60)")
    chunks.add_argument("--rounds", type=int, default=3, help="passes over the result lists (default 3)")
    chunks.add_argument("--json", type=Path, default=None, help="report path (default bench/results/)")
    scale = sub.add_parser("scale", help="recall, GET, list and staleness latency as the bank grows")
    scale.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000], help="bank sizes (memories)")
    scale.add_argument("--database-url", default=None, help="a postgresql:// URL (default: a temporary SQLite file)")
    scale.add_argument("--json", type=Path, default=None, help="report path (default bench/results/scale-*.json)")
    scale.add_argument(
        "--bank", choices=["replicated", "conversations"], default="replicated",
        help="replicated (the first runs' bank): every copy of a turn in the turn's own session, at its moment; "
        "conversations: each copy of a conversation is a session of its own, as in a bank of many conversations",
    )  # fmt: skip
    ops = sub.add_parser("operators", help="document listing, /metrics scrape and webhook dispatch cost by size")
    ops.add_argument("--sizes", nargs="+", type=int, default=[1_000, 10_000], help="document counts")
    ops.add_argument("--operations", type=int, default=10_000, help="operations stored for the scrape")
    ops.add_argument("--repeat", type=int, default=21, help="timed calls per figure (median)")
    ops.add_argument("--json", type=Path, default=None, help="report path (default bench/results/operators.json)")
    load = sub.add_parser("load", help="concurrent load on a server process: SQLite, then PostgreSQL, one run")
    load.add_argument(
        "--database-url", default=os.environ.get("MINDBANK_TEST_POSTGRES_URL") or None,
        help="a postgresql:// URL on a server with pgvector; a fresh database is made beside it and dropped "
        "(default MINDBANK_TEST_POSTGRES_URL; without one PostgreSQL is skipped)",
    )  # fmt: skip
    load.add_argument("--seconds", type=float, default=60.0, help="length of each mixed-load run (default 60)")
    load.add_argument("--stores", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    load.add_argument(
        "--big-chars", type=int, default=1_000_000, help="size of the async retain (default 1,000,000 characters)"
    )
    load.add_argument("--json", type=Path, default=None, help="report path (default bench/results/load.json)")
    big = sub.add_parser("big-retain", help="one large memory retained async into a server, with its embedder")
    big.add_argument("--chars", type=int, default=1_000_000, help="size of the memory (default 1,000,000 characters)")
    big.add_argument("--json", type=Path, default=None, help="report path (default bench/results/big-retain.json)")
    big.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the retain (default 900)")
    kb = sub.add_parser("knowledge-base", help="tree, page search and export latency as the knowledge base grows")
    kb.add_argument("--sizes", nargs="+", type=int, default=[100, 1000], help="page counts (default: 100 1000)")
    kb.add_argument("--database-url", default=None, help="a postgresql:// URL (default: a temporary SQLite file)")
    kb.add_argument("--json", type=Path, default=None, help="report path (default bench/results/knowledge-base-*.json)")

    latency = sub.add_parser(
        "recall-latency", help="POST /memories/recall over loopback HTTP: 1,000 memories, 50 queries, p50/p95"
    )
    latency.add_argument(
        "--database-url", default=os.environ.get("MINDBANK_TEST_POSTGRES_URL") or None,
        help="a postgresql:// URL on a server with pgvector: a fresh database is made beside it and dropped "
        "(default MINDBANK_TEST_POSTGRES_URL; without one PostgreSQL is skipped)",
    )  # fmt: skip
    latency.add_argument(
        "--json", type=Path, default=None, help="report path (default bench/results/recall-latency.json)"
    )
    parsers = sub.add_parser("parsers", help="hostile uploads: HTML extraction time, hostile PDFs and ZIP bombs")
    parsers.add_argument("--paragraphs", nargs="+", type=int, default=[5_000, 10_000, 20_000, 40_000])
    parsers.add_argument("--repeat", type=int, default=3, help="runs per case, the best kept (default 3)")
    parsers.add_argument("--json", type=Path, default=None, help="report path (default bench/results/parsers.json)")

    transfer = sub.add_parser("transfer", help="export a bank and restore it elsewhere: time, archive size, memory")
    transfer.add_argument("--sizes", nargs="+", type=int, default=[10_000], help="bank sizes (memories)")
    transfer.add_argument("--database-url", default=None, help="restore into this postgresql:// URL (default SQLite)")
    transfer.add_argument("--json", type=Path, default=None, help="report path (default bench/results/transfer-*.json)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen benchmark; returns the process exit status."""
    args = _parser().parse_args(argv)
    if args.command == "locomo-recall":
        from bench import locomo_recall

        if any(k < 1 for k in args.k):
            raise SystemExit("--k values must be >= 1")
        locomo_recall.run(
            args.paths,
            ks=args.k,
            json_out=args.json,
            ablations=args.ablations,
            variant=args.index_variant,
            candidates=args.candidates,
        )
    elif args.command == "retain":
        from bench import retain

        retain.run(args.path, repeat=args.repeat, json_out=args.json)
    elif args.command == "consolidation":
        from bench import consolidation

        consolidation.run(
            args.paths, database_url=args.database_url, json_out=args.json, skip=args.skip, before_src=args.before_src
        )
    elif args.command == "refresh-cost" and args.failing_provider:
        from bench import failing_provider

        failing_provider.run(hours=args.hours, database_url=args.database_url, json_out=args.json)
    elif args.command == "refresh-cost":
        from bench import refresh_cost

        if args.path is None:
            raise SystemExit("refresh-cost needs a LoCoMo PATH (or --failing-provider)")
        refresh_cost.run(args.path, recall_max_tokens=args.recall_max_tokens, json_out=args.json)
    elif args.command == "gate-calibration":
        from bench import gate_calibration

        gate_calibration.run(args.paths or gate_calibration.default_paths(), json_out=args.json)
    elif args.command == "answers":
        from bench import answers

        answers.run(args.paths, count=args.questions, after=args.after, only_after=args.only_after, pages=args.pages,
                    json_out=args.json)  # fmt: skip
    elif args.command == "freshness":
        from bench import freshness

        freshness.run(args.path, json_out=args.json)
    elif args.command == "mm-quality":
        from bench import mm_quality

        mm_quality.run(
            args.paths, churn_id=args.churn, timing_id=args.timing, repeat=args.repeat, json_out=args.json,
            skip=args.skip,
        )  # fmt: skip
    elif args.command == "operators":
        from bench import operators

        operators.run(args.sizes, operations=args.operations, repeat=args.repeat, json_out=args.json)
    elif args.command == "big-retain":
        from bench import big_retain

        big_retain.run(chars=args.chars, json_out=args.json, timeout_s=args.timeout)
    elif args.command == "load":
        from bench import load

        load.run(
            database_url=args.database_url,
            seconds=args.seconds,
            stores=tuple(args.stores),
            json_out=args.json,
            big_chars=args.big_chars,
        )
    elif args.command == "knowledge-base":
        from bench import knowledge_base

        knowledge_base.run(args.sizes, database_url=args.database_url, json_out=args.json)
    elif args.command == "recall-latency":
        from bench import recall_latency

        recall_latency.run(database_url=args.database_url, json_out=args.json)
    elif args.command == "parsers":
        from bench import parsers

        parsers.run(args.paragraphs, repeat=args.repeat, json_out=args.json)
    elif args.command == "transfer":
        from bench import transfer

        transfer.run(args.sizes, database_url=args.database_url, json_out=args.json)
    elif args.command == "chunk-neighbours":
        from bench import chunk_neighbours

        chunk_neighbours.run(
            args.path, database=args.database, questions=args.questions, rounds=args.rounds, json_out=args.json
        )
    else:
        from bench import scale

        scale.run(args.sizes, database_url=args.database_url, json_out=args.json, bank=args.bank)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
