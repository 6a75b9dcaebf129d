"""The command line (`riskreport run`, `batch`, `templates`, `new-template`, `inspect`, `demo`) and template authoring."""


def main(argv: list[str] | None = None) -> int:
    """The `riskreport` command (the console script of pyproject.toml): `commands.main`, imported when called."""
    from riskreport.run.cli.commands import main as run

    return run(argv)
