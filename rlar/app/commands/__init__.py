"""CLI command groups. Each module defines ``register(sub)`` adding its subparsers; heavy imports stay
inside the command functions so ``rlar --help`` is instant. Add a new group to :data:`MODULES`."""

MODULES: list[str] = [
    "rlar.app.commands.bus",
    "rlar.app.commands.deploy",
    "rlar.app.commands.tools",
    "rlar.app.commands.reward",
    "rlar.app.commands.train",
    "rlar.app.commands.routing",
    "rlar.app.commands.retrieve",
    "rlar.app.commands.eval",
    "rlar.app.commands.observe",
    "rlar.app.commands.synthesis",
    "rlar.app.commands.export",
    "rlar.app.commands.plan",
    "rlar.app.commands.models",
    "rlar.app.commands.bench",
]
