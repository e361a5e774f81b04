"""Command line: ``jalapeno build``, ``jalapeno refresh``, ``jalapeno params``, ``jalapeno numbers``,
``jalapeno derive``, ``jalapeno measurements``.

Examples::

    jalapeno build                                   # the whole book, default parameters -> build/html
    jalapeno build reading-the-numbers -p baseline_power_w 1400 --out build/whatif
    jalapeno build -y 'models: [gpt-oss-120b]' roofline
    jalapeno build -f my-parameters.yml
    jalapeno build --scenario scenarios/gb300-baseline.yml      # -> build/scenarios/gb300-baseline
    jalapeno build roofline --scenario vera-rubin-baseline     # a shipped scenario, by name
    jalapeno build --scenario gb300-baseline --dask tcp://10.0.0.5:8786   # notebooks on a Dask cluster
    jalapeno build --measurements my-runs.jsonl      # the book with the constants refitted on a reader's runs
    jalapeno build --measurements runs.json --chips my-chip.csv --out build/mine   # ... runs of a new chip
    jalapeno build serving-model --measurements my-runs.jsonl --hold-out   # ... only scored, not fitted on
    jalapeno numbers --record                        # record this version's published numbers
    jalapeno params roofline                         # list a notebook's parameters and defaults
    jalapeno params roofline --write-cell            # its parameters cell, from its declaration
    jalapeno refresh                                 # re-execute committed notebooks in place
    jalapeno derive schemes                          # regenerate a committed derived table (data/derived/)
    jalapeno measurements check my-runs.jsonl        # check a reader's benchmark runs (JSON lines or array)
    jalapeno measurements check runs.json --chips my-chip.csv   # runs of a chip the book does not have
    jalapeno measurements score my-runs.jsonl        # the model's error on them, on the default path
    jalapeno measurements score runs.json --chips my-chip.csv   # ... on a chip the book does not have
    jalapeno measurements score my-runs.jsonl --out build/my-runs   # ... and a page of each series' frontier

``-p NAME VALUE`` values are read as YAML scalars or lists (``1400``, ``-1e3``, ``true``, ``[gb200, h200]``)
under YAML 1.2 rules (:func:`jalapeno.publish.params.read_yaml`: ``020000`` is 20000, no aliases, size and
depth limits); each must have the type of the notebook's default. Bad input exits with status 2 and a
message naming the bad value and the valid choices; nothing is written. No input gives a traceback:
every error of the package, of YAML, of the file system and of a value the models refuse is one line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Executor

from . import build as _build
from . import execute, output, pages, params, scenarios
from .. import cache, calibration, derived, measurements, schemes, subject, uncertainty
from ..errors import JalapenoError, shown


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jalapeno", description="Build and rerun the Jalapeño inference book.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute notebooks with parameters and render the book to HTML")
    # a VALUE such as -1e3, -.5 or -.inf is a value, not an option: argparse's own rule (its attribute
    # _negative_number_matcher, what it consults for every argument starting with "-") takes only -5 and -0.5
    b._negative_number_matcher = re.compile(r"^-\.?(\d|inf)", re.IGNORECASE)
    b.add_argument("notebooks", nargs="*", help="notebook names (default: all)")
    b.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="set a parameter (VALUE read as YAML: 1400, true, [a, b])")
    b.add_argument("-y", "--yaml", action="append", default=[], help="parameters as a YAML mapping string")
    b.add_argument("-f", "--parameters-file", action="append", default=[], help="parameters from a YAML file")
    b.add_argument("-s", "--scenario", help="a scenario file (or the name of one in scenarios/): its parameters, "
                   "its name on every page; -p/-y/-f values win over it")
    b.add_argument("--out", default=None,
                   help="output folder (default build/html, or build/scenarios/<name> with --scenario)")
    b.add_argument("-j", "--jobs", type=int, default=None, help="notebooks executed at once (default: one per core)")
    b.add_argument("--no-cache", action="store_true", help="re-execute every notebook, even with unchanged inputs")
    b.add_argument("--measurements", metavar="FILE", help="a reader's benchmark runs (JSON array or JSON lines, "
                   "as `measurements check` reads them): the serving model's constants are refitted on the shipped "
                   "rows and these, and the book rebuilt on them (default: the scenario's measurements, if any)")
    b.add_argument("--chips", metavar="FILE", help="with --measurements: a CSV of the new chips its runs name")
    b.add_argument("--hold-out", action="store_true", help="with --measurements: do not refit; score the runs "
                   "(printed, and shown on the serving-model page) and build at the stored calibration")
    b.add_argument("--dask", metavar="SCHEDULER_ADDRESS", help="execute the notebooks on the Dask cluster "
                   "of this scheduler (workers from the same checkout and environment; --jobs does not apply)")
    r = sub.add_parser("refresh", help="re-execute committed notebooks in place with their defaults")
    r.add_argument("notebooks", nargs="*")
    s = sub.add_parser("params", help="list a notebook's parameters: type, default, range and choices")
    s.add_argument("notebook", nargs="?", help="a notebook name (with --write-cell, default: every chapter)")
    s.add_argument("--json", action="store_true", help="as JSON")
    s.add_argument("--write-cell", action="store_true", help="write the notebook's parameters cell from its "
                   "chapter module's PARAMETERS (only that cell's source changes) and print the notebooks changed")
    n = sub.add_parser("numbers", help="the numbers the chapters' prose quotes, from the committed notebooks")
    n.add_argument("--record", action="store_true",
                   help="record them as this version's published numbers (book/published-numbers/<version>.json)")
    n.add_argument("--force", action="store_true", help="with --record: overwrite a version recorded before")
    d = sub.add_parser("derive", help="regenerate the committed derived tables of the noisy stages (data/derived/)")
    d.add_argument("stages", nargs="*", metavar="STAGE", help=f"default every one: {', '.join(DERIVERS)}")
    m = sub.add_parser("measurements", help="check a reader's benchmark runs, or score the model on them")
    msub = m.add_subparsers(dest="action", required=True)
    mc = msub.add_parser("check", help="check a JSON array or JSON-lines file of InferenceX agg_bmk.json-style runs")
    mc.add_argument("file", help="the runs (JSON array of objects, or one JSON object a line)")
    mc.add_argument("--chips", help="a CSV of new chips: what data/chips.csv and data/chip_specs.csv hold for each")
    ms = msub.add_parser("score", help="the model's error on a reader's runs, predicted on the default path")
    ms.add_argument("file", help="the runs (JSON array of objects, or one JSON object a line)")
    ms.add_argument("--chips", help="a CSV of new chips: what data/chips.csv and data/chip_specs.csv hold for each")
    ms.add_argument("--out", help="also write a page of the measured points over each predicted frontier and its "
                    "band into this folder (the build's rules: a new or empty folder, or one jalapeno wrote)")
    return p


def _measurements(args: argparse.Namespace) -> str:
    """What ``jalapeno measurements check|score`` prints (:mod:`jalapeno.measurements`); ``score --out``
    also writes the score's page (:func:`jalapeno.measurements.page_html`) as ``index.html`` of that folder,
    under the build's folder rules (:func:`.output.check_output`, checked before anything is computed; the
    lock, the stage and the atomic swap of :mod:`.output`)."""
    if args.action == "check":
        return measurements.check_report(measurements.read(args.file, args.chips))
    if args.out is None:
        return measurements.score_report(measurements.score(args.file, args.chips))
    protected = {"the build cache": cache.folder()}  # the sources: check_output refuses the repository outside build/
    out = output.check_output(args.out, protected)
    result = measurements.scored(args.file, args.chips)
    page = measurements.page_html(result)
    with output.locked(out):
        for line in output.remove_stale_stages(out):
            print(line, file=sys.stderr)
        stage = output.make_stage(out)
        try:
            (stage / "html").mkdir()
            (stage / "html" / "index.html").write_text(page)
            output.replace(out, stage / "html", stage, protected)
        finally:
            output.remove_stage(stage)
    return measurements.score_report(result.table) + f"\n{out / 'index.html'}"


#: The function that regenerates each stage's table (:data:`jalapeno.derived.STAGES`, in its order).
DERIVERS = {"calibration": calibration.derive_calibration,
            "jalapeno-fits": subject.derive_fits, "jalapeno-nodes": uncertainty.derive_nodes,
            "schemes": schemes.derive_schemes}


def _derive(stages: list[str]) -> list[str]:
    for name in stages:
        derived.stage(name)  # UnknownNameError for an unknown stage, before anything is computed
    return [str(DERIVERS[name]()) for name in (stages or derived.STAGES)]


def _parameters(args: argparse.Namespace) -> dict[str, object]:
    values: dict[str, object] = {}
    for path in args.parameters_file:
        values.update(scenarios.load_parameter_file(path))
    for text in args.yaml:
        data = params.read_yaml(text, "-y")
        if not isinstance(data, dict):
            raise JalapenoError(f"-y expects a YAML mapping such as 'name: value', got {shown(text)}")
        values.update(data)
    given: dict[str, str] = {}
    for name, text in args.parameter:  # -p overrides a file's or -y's value, but not another -p's
        if name in given:
            raise JalapenoError(f"parameter {shown(name)} given twice with -p ({shown(given[name])} and "
                                f"{shown(text)}); give it once")
        given[name] = text
        values[name] = params.read_yaml(text, f"-p {shown(name)}")
    return values


@contextlib.contextmanager
def _dask_executor(address: str | None) -> Iterator[Executor | None]:
    """The executor of the Dask cluster at ``address`` (None without one). Raises JalapenoError naming
    the address when no scheduler answers there within 10 s."""
    if address is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise JalapenoError("--dask needs the distributed package (pip install -e '.[book,test]')") from None
    try:
        client = distributed.Client(address, timeout=10)
    except (OSError, ValueError, TypeError) as exc:
        raise JalapenoError(f"--dask {address}: no Dask scheduler could be reached there "
                            f"({(str(exc) or type(exc).__name__).splitlines()[0]})") from None
    with client:
        yield client.get_executor()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the build is so that it cleans up as after Ctrl-C; exits 128 + 15."""


def _interrupted(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupted)  # SIGTERM cleans up as Ctrl-C does
        signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored
    replaced = len(output.REPLACED)
    try:
        if args.command == "build":
            if args.jobs is not None and args.jobs < 1:
                raise JalapenoError(f"--jobs must be a positive number of notebooks, got {args.jobs}")
            values = _parameters(args)
            with _dask_executor(args.dask) as executor:
                index = _build.build(args.notebooks or None, values, args.out, scenario=args.scenario,
                                     use_cache=not args.no_cache, jobs=args.jobs, executor=executor,
                                     measurements=args.measurements, chips=args.chips, hold_out=args.hold_out)
            print(index)
        elif args.command == "refresh":
            for path in execute.refresh(args.notebooks or None):
                print(path)
        elif args.command == "params" and args.write_cell:
            names = [args.notebook] if args.notebook else scenarios.notebook_names()
            for path in map(scenarios.notebook_path, names):
                if params.write_cell(path):
                    print(scenarios.display_path(path))
        elif args.command == "params":
            if args.notebook is None:
                raise JalapenoError(f"params needs a notebook name; notebooks: {', '.join(scenarios.notebook_names())}")
            print(scenarios.describe(args.notebook, args.json))
        elif args.command == "derive":
            for path in _derive(args.stages):
                print(path)
        elif args.command == "measurements":
            print(_measurements(args))
        elif args.command == "numbers":
            if args.record:
                print(pages.record_numbers(force=args.force))
            else:
                print(json.dumps(pages.committed_numbers(), indent=1, ensure_ascii=False))
    except BrokenPipeError:  # the reader of stdout left (| head): no error line, as the signal module's docs advise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit would raise again
        return 1
    except (JalapenoError, ValueError, OSError) as exc:  # the package's bad input, a value a model refuses, a file
        print(f"jalapeno: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        if output.REPLACED[replaced:]:
            where = f"the new site was already in place in {output.REPLACED[-1]}"
        else:
            where = "the output folder was left as it was"
        print(f"jalapeno: interrupted: {args.command} stopped, its workers ended; {where}", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)  # the shell's convention
    return 0


if __name__ == "__main__":
    sys.exit(main())
