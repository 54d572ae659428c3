from arena import modes


class AgentsConfig(modes.ModeConfig):
    name = "agents"
    mode = modes.Mode(key="voice", label="Voice", path="voice/", order=40,
                summary="Talk to two anonymous voice agents on the same task, then vote.")
