"""A test block that makes listed tasks hold one resource (the kernel's helpers, as the tutorial's
``one_engine`` uses them), registered as ``test_holds``."""

from schedkit import Block, register_block
from schedkit.blocks.holding import resource_cp, resource_rows, resource_violations
from schedkit.timing import Resource


@register_block("test_holds", replace=True)
class HoldsBlock(Block):
    """The listed tasks hold one resource of ``capacity`` units."""

    requires = frozenset({"x", "timing"})
    builds_rows = True
    tasks: tuple[str, ...] = ()
    """The holders."""
    capacity: int = 1
    """Units of the resource."""
    template = r"At most {{ capacity }} of the listed tasks run at once."

    def resource(self):
        return Resource("unit", frozenset(self.tasks), self.capacity)

    def timing_rules(self, rules, problem):
        return rules.replace(resources=rules.resources + (self.resource(),))

    def build(self, ctx, rows):
        resource_rows(ctx, rows, self.resource())

    def build_cp(self, cp):
        resource_cp(cp, self.resource())

    def violations(self, problem, schedule):
        return resource_violations(schedule, self.resource())


def holding(tasks, capacity=1, name="held"):
    """A formulation of the problem's own semantics plus ``test_holds``."""
    return {"name": name, "blocks": ["assignment", "placement", "precedence", "no_overlap", "memory",
                                     {"test_holds": {"tasks": list(tasks), "capacity": capacity}}]}
