"""Ask every model one question, let every model rank all answers, show the averaged verdict.

The same services as the page: answers and judgements run as Celery tasks. If no worker of
this arena beats (arena.readiness), a worker process is started for as long as the command
runs.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextlib import ExitStack, contextmanager

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from arena.errors import RuleError
from arena.selectors import model_list_with_availability
from arena.webserver import command_worker
from panels import display, selectors, services
from panels.models import PanelOrigin

POLL_SECONDS = 0.3


class Command(BaseCommand):
    help = "Run a panel: every model answers QUESTION, every answering model ranks all answers."

    def add_arguments(self, parser):
        parser.add_argument("question", nargs="?", default="", help="The question to ask.")
        parser.add_argument("--auto", action="store_true",
                            help="Let the question model write a challenging question.")
        parser.add_argument("--models", nargs="+", metavar="ID",
                            help="Only these model ids (default: every available model).")
        parser.add_argument("--no-clarify", action="store_true",
                            help="Do not clarify the question first (never when not a terminal).")
        parser.add_argument("--public", action="store_true",
                            help="List the panel on /panel/ for everyone (default: by link).")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="Print the whole result as JSON on stdout (display on stderr).")
        parser.add_argument("--timeout", type=float, default=900.0,
                            help="Seconds to wait for the panel (default 900).")
        parser.add_argument("--worker", choices=("auto", "external", "start"), default="auto",
                            help="auto: start a Celery worker process unless one of this "
                                 "arena's beats (default); external: workers run elsewhere; "
                                 "start: always start one.")

    def handle(self, *args, question="", auto=False, models=None, no_clarify=False,
               as_json=False, timeout=900.0, worker="auto", public=False, **options):
        console = Console(file=self.stderr if as_json else self.stdout, highlight=False,
                          width=None if self._interactive() else 110)
        display.show_key_status(console, model_list_with_availability())
        if not question and not auto:
            if not self._interactive():
                raise CommandError("Give a QUESTION, or --auto to have one written.")
            question = console.input("[bold]Your question:[/bold] ").strip()
        clarify = not (auto or no_clarify) and self._interactive()
        with ExitStack() as stack:
            if as_json:
                stack.enter_context(_logs_to_stderr())
            if worker != "external":
                stack.enter_context(command_worker(console.print, "panel-cli",
                                                   always=worker == "start"))
            try:
                panel = services.panel_create(question=question, models=models, auto=auto,
                                              clarify=clarify, origin=PanelOrigin.CLI,
                                              public=public)
            except RuleError as exc:
                raise CommandError(exc.message) from None
            console.print(f"Panel {panel.id}: {len(panel.participants)} models; "
                          f"page /panel/{panel.id}/")
            view = self._follow(console, panel.id, timeout)
        display.show_answers(console, view)
        display.show_judges(console, view)
        display.show_verdict(console, view)
        if as_json:
            self.stdout.write(json.dumps(selectors.panel_payload(view), indent=2,
                                         cls=DjangoJSONEncoder))
        if view.panel.status == "failed":
            raise CommandError(view.panel.error)
        if not view.panel.is_finished:
            raise CommandError(f"The panel is still running after {timeout:.0f} s; see "
                               f"/panel/{view.panel.id}/ (nothing is lost).")

    def _interactive(self) -> bool:
        return sys.stdin is not None and sys.stdin.isatty()

    def _follow(self, console: Console, panel_id, timeout: float) -> selectors.PanelView:
        """Show progress until the panel is finished, asking the person when it must."""
        deadline = time.monotonic() + timeout
        said = ""
        while True:
            view = selectors.panel_view(panel=selectors.panel_visible(panel_id=panel_id))
            if view.asking:
                self._clarify(console, view)
                continue
            if view.answers or view.panel.is_finished:
                last = view.rounds[-1] if view.rounds else None
                if last is not None and last.is_clear:
                    console.print(f"[dim]{view.panel.question_model.name} found the question "
                                  "clear.[/dim]")
                console.print(Markdown(f"**Question:** {view.panel.question}"))
                return self._progress(console, panel_id, deadline)
            status = view.panel.get_status_display()
            if status != said:
                console.print(f"[dim]{status}…[/dim]")
                said = status
            if time.monotonic() > deadline:
                return view
            time.sleep(POLL_SECONDS)

    def _progress(self, console: Console, panel_id, deadline: float) -> selectors.PanelView:
        columns = (TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, console=console, transient=False) as progress:
            answers = progress.add_task("answers", total=None)
            judgements = progress.add_task("judgements", total=None)
            while True:
                view = selectors.panel_view(panel=selectors.panel_visible(panel_id=panel_id))
                progress.update(answers, total=view.answers_total, completed=view.answers_done)
                progress.update(judgements, total=view.judgements_total or None,
                                completed=view.judgements_done)
                if view.panel.is_finished or time.monotonic() > deadline:
                    return view
                time.sleep(POLL_SECONDS)

    def _clarify(self, console: Console, view: selectors.PanelView) -> None:
        round_ = view.open_round
        console.print(f"[bold]{view.panel.question_model.name} asks[/bold] "
                      f"(round {round_.index}):")
        console.print(Markdown(round_.reply))
        answer = console.input("[bold]Your answers[/bold] (empty: ask the panel now): ").strip()
        if answer:
            services.panel_clarification_answer(panel=view.panel, answer=answer)
        else:
            services.panel_clarification_skip(panel=view.panel)


@contextmanager
def _logs_to_stderr():
    """With --json, stdout carries the JSON only: log handlers on stdout move to stderr."""
    handlers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    moved = [
        handler for logger in handlers for handler in logger.handlers
        if isinstance(handler, logging.StreamHandler)
        and getattr(handler, "stream", None) is sys.stdout
    ]
    for handler in moved:
        handler.setStream(sys.stderr)
    try:
        yield
    finally:
        for handler in moved:
            handler.setStream(sys.stdout)
