"""CLI command groups. Each module defines ``register(sub)`` adding its subparsers; heavy imports stay
inside the command functions so ``rlar --help`` is instant. Add a new group to :data:`MODULES`."""

MODULES: list[str] = [
    "rlar.commands.bus",
    "rlar.commands.deploy",
    "rlar.commands.tools",
    "rlar.commands.reward",
    "rlar.commands.train",
    "rlar.commands.routing",
    "rlar.commands.retrieve",
    "rlar.commands.eval",
    "rlar.commands.observe",
    "rlar.commands.synthesis",
    "rlar.commands.export",
    "rlar.commands.plan",
]
