from arena import modes


class DebatesConfig(modes.ModeConfig):
    name = "debates"
    mode = modes.Mode(key="debates", label="Debates", path="debates/", order=30,
                summary="Two models argue a motion in persona, fact-checked and judged.")
