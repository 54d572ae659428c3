"""Voice-agent battles (seed 002): a person talks, by voice, to two anonymous voice agents on
the same task scenario, one after the other, then votes overall and per dimension.

A battle pairs a :class:`Scenario` with two :class:`AgentConfiguration` rows (A and B). Each
conversation goes through the audio proxy (:mod:`agents.proxy`) and is saved as an
:class:`AgentConversation` with both recordings. Its evaluation runs on the platform's steps
(:class:`EvaluationStage`): latency measured from the recordings and the transcripts first,
then, after the vote, the LLM judge with the slot and containment checks.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from arena.models import CountedVote, CreatedAtModel, UUIDModel
from arena.steps import Step


class Category(models.TextChoices):
    BOOKING = "booking", "Booking"
    SUPPORT = "support", "Customer support"
    INFO = "info_retrieval", "Information"


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class Architecture(models.TextChoices):
    CASCADE = "cascade", "Cascade (STT → LLM → TTS)"
    HALF_CASCADE = "half_cascade", "Half cascade"
    S2S = "s2s", "Speech to speech"
    ORCHESTRATOR = "orchestrator", "Orchestrator"
    HYBRID = "hybrid", "Hybrid"


class Provider(models.TextChoices):
    LOCAL = "local", "Local (offline demo)"
    VAPI = "vapi", "Vapi"
    RETELL = "retell", "Retell"
    ECHO = "echo", "Echo (plays the caller back; for diagnostics and benchmarks)"


class Scenario(UUIDModel, CreatedAtModel):
    """A task the caller carries out with both agents; both get the same system prompt."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=120)
    category = models.CharField(max_length=20, choices=Category.choices)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices)
    description_for_user = models.TextField(help_text="The caller's task, shown on the page.")
    system_prompt = models.TextField(help_text="Given to both agents.")
    first_message = models.CharField(max_length=300, blank=True,
                                     help_text="What an agent says when the call opens.")
    required_slots = models.JSONField(
        default=list, blank=True,
        help_text='[{"name": "day", "value": "Tuesday", "patterns": ["tuesday"]}]: what the '
                  "agent must capture (joint goal accuracy).")
    success_criteria = models.TextField(help_text="For the LLM judge.")
    tools_available = models.JSONField(
        default=list, blank=True,
        help_text='[{"name", "description", "parameters", "triggers", "result"}]: simulated '
                  "tools with canned results.")
    max_turns = models.PositiveSmallIntegerField(default=10)
    max_duration_seconds = models.PositiveSmallIntegerField(default=120)
    adversarial_turns = models.JSONField(default=list, blank=True,
                                         help_text="Optional twists the caller is asked to try.")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["category", "difficulty", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(category__in=Category.values),
                                   name="scenario_category_valid"),
            models.CheckConstraint(condition=Q(difficulty__in=Difficulty.values),
                                   name="scenario_difficulty_valid"),
        ]

    def __str__(self) -> str:
        return self.name


class AgentConfiguration(UUIDModel, CreatedAtModel):
    """One voice agent: a provider and its components (speech to text, model, voice)."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=120)
    architecture_type = models.CharField(max_length=20, choices=Architecture.choices,
                                         default=Architecture.CASCADE)
    provider = models.CharField(max_length=20, choices=Provider.choices)
    components_json = models.JSONField(default=dict, blank=True,
                                       help_text='{"stt": ..., "llm": ..., "tts": ...}')
    config_json = models.JSONField(default=dict, blank=True,
                                   help_text="Provider settings (model, voice, ids).")
    provider_state_json = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="What the provider created for this agent (Retell's LLM and agent ids), "
                  "with the fingerprint of the settings it was created from.")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["provider", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(provider__in=Provider.values),
                                   name="agent_provider_valid"),
            models.CheckConstraint(condition=Q(architecture_type__in=Architecture.values),
                                   name="agent_architecture_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_offline_demo(self) -> bool:
        return self.provider == Provider.LOCAL


class BattleStatus(models.TextChoices):
    BRIEFING = "briefing", "Ready to talk"
    CONVERSING = "conversing", "Conversations under way"
    VOTING = "voting", "Waiting for the vote"
    VOTED = "voted", "Voted"
    FAILED = "failed", "An agent failed"


class AgentBattle(UUIDModel):
    """Two agents on one scenario for one visitor; A is always talked to first."""

    session_key = models.CharField(max_length=64, db_index=True)
    formulation = models.CharField(max_length=20, default="outcome")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="battles")
    config_a = models.ForeignKey(AgentConfiguration, on_delete=models.PROTECT,
                                 related_name="battles_as_a")
    config_b = models.ForeignKey(AgentConfiguration, on_delete=models.PROTECT,
                                 related_name="battles_as_b")
    status = models.CharField(max_length=12, choices=BattleStatus.choices,
                              default=BattleStatus.BRIEFING)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=~Q(config_a=models.F("config_b")),
                                   name="agent_battle_two_agents"),
        ]

    def __str__(self) -> str:
        return f"voice battle {self.pk}"

    def config(self, label: str) -> AgentConfiguration:
        return self.config_a if label == "a" else self.config_b


class ConversationStatus(models.TextChoices):
    LIVE = "live", "Live"
    DONE = "done", "Finished"
    FAILED = "failed", "Failed"


def recordings_dir() -> Path:
    """The folder a conversation's recordings (``user_audio_path``, ``agent_audio_path``) are
    saved under (``ARENA_VOICE_MEDIA_DIR``)."""
    return Path(settings.ARENA_VOICE_MEDIA_DIR)


class AgentConversation(UUIDModel, CreatedAtModel):
    """One call between the visitor and one agent, with both recordings and what was said."""

    battle = models.ForeignKey(AgentBattle, on_delete=models.CASCADE,
                               related_name="conversations")
    agent_config = models.ForeignKey(AgentConfiguration, on_delete=models.PROTECT,
                                     related_name="conversations")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT,
                                 related_name="conversations")
    agent_label = models.CharField(max_length=1)
    status = models.CharField(max_length=8, choices=ConversationStatus.choices,
                              default=ConversationStatus.LIVE)
    end_reason = models.CharField(max_length=200, blank=True)
    error = models.CharField(max_length=300, blank=True, help_text="Safe to show a person.")
    turns_json = models.JSONField(
        default=list, blank=True,
        help_text="[{role, text, at_ms, start_ms, end_ms, latency_ms}] as heard live: where "
                  "each turn's audio lies in its recording and how long the agent took to "
                  "answer (agents.speech.turn_clock); the recordings are measured again later.")
    tool_calls_json = models.JSONField(default=list, blank=True)
    total_turns = models.PositiveSmallIntegerField(default=0)
    duration_seconds = models.FloatField(null=True, blank=True)
    user_audio_path = models.CharField(max_length=300, blank=True)
    agent_audio_path = models.CharField(max_length=300, blank=True)
    transcript_full = models.TextField(blank=True, help_text="Both recordings, transcribed.")
    turn_gaps_json = models.JSONField(default=list, blank=True,
                                      help_text="Measured gaps: caller stops → agent starts.")
    avg_response_latency_ms = models.FloatField(null=True, blank=True)
    p50_latency_ms = models.FloatField(null=True, blank=True)
    p95_latency_ms = models.FloatField(null=True, blank=True)
    ttfb_avg_ms = models.FloatField(null=True, blank=True,
                                    help_text="The first response's gap.")
    provider_metrics_json = models.JSONField(default=dict, blank=True,
                                             help_text="What the provider reports itself.")
    task_success = models.BooleanField(null=True, blank=True)
    coherence = models.FloatField(null=True, blank=True)
    instruction_following = models.FloatField(null=True, blank=True)
    hallucination_count = models.PositiveSmallIntegerField(null=True, blank=True)
    judge_reason = models.TextField(blank=True)
    joint_goal_accuracy = models.FloatField(null=True, blank=True)
    slots_json = models.JSONField(default=dict, blank=True)
    containment = models.BooleanField(null=True, blank=True)
    turns_to_completion = models.PositiveSmallIntegerField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["agent_label"]
        constraints = [
            models.UniqueConstraint(fields=["battle", "agent_label"],
                                    name="agent_conversation_one_per_slot"),
            models.CheckConstraint(condition=Q(agent_label__in=("a", "b")),
                                   name="agent_conversation_label_valid"),
        ]

    def __str__(self) -> str:
        return f"conversation {self.agent_label} of {self.battle_id}"


class Overall(models.TextChoices):
    A = "a", "Agent A"
    B = "b", "Agent B"
    TIE = "tie", "Tie"


SUB_DIMENSIONS = ("naturalness", "speed", "understanding", "helpfulness")


class AgentVote(CountedVote, CreatedAtModel):
    """The visitor's one vote on a battle: overall and per dimension."""

    battle = models.OneToOneField(AgentBattle, on_delete=models.CASCADE, related_name="vote")
    session_key = models.CharField(max_length=64)
    overall = models.CharField(max_length=3, choices=Overall.choices)
    sub_votes_json = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(overall__in=Overall.values),
                                              name="agent_vote_overall_valid")]

    def __str__(self) -> str:
        return f"{self.overall} on {self.battle_id}"

    @property
    def winner(self) -> str:
        """In the boards' terms."""
        return {"a": "model_a", "b": "model_b"}.get(self.overall, "tie")


class StageKind(models.TextChoices):
    LATENCY = "latency", "Turn latency from the recordings"
    TRANSCRIPT = "transcript", "Transcripts of both recordings"
    JUDGE = "judge", "Task success, slots and containment"


class EvaluationStage(Step, UUIDModel, CreatedAtModel):
    """One stage of a conversation's evaluation, run by ``agents.tasks.run_evaluation_stage``."""

    task_name = "agents.tasks.run_evaluation_stage"

    conversation = models.ForeignKey(AgentConversation, on_delete=models.CASCADE,
                                     related_name="stages")
    kind = models.CharField(max_length=12, choices=StageKind.choices)

    class Meta:
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["conversation", "kind"],
                                               name="evaluation_stage_once")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.conversation_id}"
