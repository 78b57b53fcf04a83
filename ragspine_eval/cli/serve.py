"""`ragspine-eval serve`: the engine's own HTTP service over a knowledge base, for --engine http://."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragspine_eval import paths
from ragspine_eval.cli.common import EXIT_OK, EXIT_REGRESSION, shown

HELP = "run the engine's own HTTP service over a knowledge base, for --engine http://"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default: 8000)")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help=f"knowledge base folder to serve (default: {shown(paths.KB_DIR)})")
    parser.add_argument("--reference-date", type=_iso_date, default=None, metavar="YYYY-MM-DD",
                        help="the service's reference date for relative periods (default: the "
                             "one most cases of --golden share)")
    parser.add_argument("--golden", type=Path, default=paths.QA_GOLDEN_SET,
                        help="golden set the default reference date is taken from "
                             f"(default: {shown(paths.QA_GOLDEN_SET)})")
    from ragspine_eval.cli.model_options import add_model_arguments

    add_model_arguments(parser, cassette=False)


def run(args: argparse.Namespace) -> int:
    import signal
    import tempfile

    from ragspine_eval.golden.cases import load_golden_set
    from ragspine_eval.knowledge.kb import build_eval_kb
    from ragspine_eval.engines.service import (
        most_common_reference_date,
        start_service,
    )

    from ragspine_eval.cli.model_options import provider_spec

    provider = provider_spec(args)  # a missing key or package: exit 2 before the service starts
    with tempfile.TemporaryDirectory(prefix="ragspine-eval-serve-") as scratch:
        ref = args.reference_date or most_common_reference_date(load_golden_set(args.golden))
        kb = build_eval_kb(args.kb, scratch)
        service = start_service(kb, ref, log_path=Path(scratch) / "service.log", port=args.port,
                                provider=None if provider.is_default else provider)
        print(f"the engine's service answers {service.url}/v1/ask over {args.kb} "
              f"(reference date {ref}"
              f"{'' if provider.is_default else '; ' + provider.describe()}); Ctrl-C stops it",
              flush=True)
        print(f"evaluate it with: ragspine-eval qa --engine {service.url}", flush=True)
        # SIGTERM stops the service like Ctrl-C does, so it never outlives this command.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            code = service.process.wait()
        except KeyboardInterrupt:
            return EXIT_OK
        finally:
            service.stop()
        print(f"error: the engine's service stopped by itself (exit code {code}); its last log "
              f"lines:\n{service.log()[-2000:]}", file=sys.stderr)
        return EXIT_REGRESSION


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _iso_date(text: str):  # noqa: ANN202 - a date
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from None
