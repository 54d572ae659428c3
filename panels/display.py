"""Rich console output of ``manage.py panel``, after seed 003's display module: key status,
the answers as Markdown, one table per judge and the final averaged leaderboard."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel as Box
from rich.table import Table

from arena.api_keys import DEFAULT_PREFIX_LEN, api_key, key_names, key_prefix, key_source
from panels.selectors import PanelView


def key_status(env_var: str, prefix_len: int = DEFAULT_PREFIX_LEN) -> str:
    """How a key variable looks: the variable that holds it and at most ``prefix_len``
    characters of it (the models file's ``prefix_len``, seed 003's)."""
    if not env_var:
        return "no key needed"
    source = key_source(env_var)
    if source is None:
        return f"[red]{' or '.join(key_names(env_var))} not set[/red]"
    return f"[green]{source} {key_prefix(api_key(env_var), prefix_len)}[/green]"


def show_key_status(console: Console, rows) -> None:
    """``rows``: (AIModel, Availability) pairs, as the model registry reports them."""
    table = Table(title="Providers and keys", title_justify="left")
    for column in ("model", "provider", "key", "available"):
        table.add_column(column)
    for model, availability in rows:
        table.add_row(
            model.name, model.provider, key_status(model.api_key_env, model.key_prefix_len),
            "[green]yes[/green]" if availability.available
            else f"[red]no[/red] [dim]{availability.reason}[/dim]",
        )
    console.print(table)


def show_answers(console: Console, view: PanelView) -> None:
    for answer in view.answers:
        if answer.status == "done":
            note = f"\n\n_(names a model: “{answer.names_model}”)_" if answer.names_model else ""
            body = Markdown(answer.text + note)
            subtitle = f"{answer.latency_ms} ms · {answer.output_tokens} tokens"
            console.print(Box(body, title=answer.model.name, subtitle=subtitle,
                              title_align="left"))
        else:
            console.print(Box(f"[red]skipped:[/red] {answer.error}", title=answer.model.name,
                              title_align="left"))


def show_judges(console: Console, view: PanelView) -> None:
    for j in view.judgements:
        judgement = j.judgement
        title = f"Judge: {judgement.judge.name}"
        if not judgement.is_valid:
            console.print(Box(f"[yellow]discarded:[/yellow] {judgement.discard_reason}",
                              title=title, title_align="left"))
            continue
        table = Table(title=f"{title} (ranked itself {j.self_rank} of {len(j.ranking)})",
                      title_justify="left")
        table.add_column("rank", justify="right")
        table.add_column("model")
        table.add_column("shown as")
        for rank, label, model in j.ranking:
            self_mark = " [dim](self)[/dim]" if model.slug == judgement.judge_id else ""
            table.add_row(str(rank), model.name + self_mark, f"Response {label}")
        console.print(table)


def leaderboard_table(view: PanelView, *, exclude_self: bool = False) -> Table:
    judges = view.judges
    title = "Final leaderboard: average rank" + (" without self-votes" if exclude_self else "")
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("model")
    table.add_column("avg rank", justify="right")
    for judge in judges:
        table.add_column(f"by {judge.name}", justify="right")
    table.add_column("self-rank", justify="right")
    for s in view.standings(exclude_self=exclude_self):
        average = "–" if s.average_rank is None else f"{s.average_rank:.2f}"
        ranks = ["–" if r is None else str(r) for r in s.ranks]
        self_rank = "–" if s.self_rank is None else str(s.self_rank)
        table.add_row(str(s.position), s.model.name, average, *ranks, self_rank)
    return table


def show_verdict(console: Console, view: PanelView) -> None:
    if not view.panel.verdict or not view.judges:
        return
    console.print(leaderboard_table(view))
    console.print(leaderboard_table(view, exclude_self=True))
    w = view.kendall_w
    agreement = "n/a (fewer than two valid rankings)" if w is None else (
        f"{w:.2f} ({view.agreement_words})")
    lines = [f"Kendall's W: {agreement}",
             f"{len(view.judges)} valid ranking(s), {len(view.discarded)} discarded"]
    leaders = view.leaders()
    if leaders:
        names = " and ".join(s.model.name for s in leaders)
        label = "Winner" if len(leaders) == 1 else "Tied for first"
        lines.insert(0, f"[bold]{label}: {names}[/bold] "
                        f"(average rank {leaders[0].average_rank:.2f})")
    console.print(Group(*lines))
