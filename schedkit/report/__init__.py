"""Visual and textual output: pure functions of a problem and a schedule."""
