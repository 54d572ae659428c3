// Voice battle page: seed 002's state machine
//   idle → briefing → conversing_a → transition → conversing_b → voting → revealed
// The battle comes from POST /battles/generate; each call streams 16 kHz 16-bit PCM both
// ways over WS /battles/{id}/agent-stream?agent=a|b (the microphone through an AudioWorklet
// that downsamples to 16 kHz; the agent played back gaplessly by voice-audio.js); text frames
// carry transcripts and events. While a call runs, both voices are drawn live on a canvas
// (voice-audio.js: an AnalyserNode on the microphone, another on the agent's playback).
// Before the vote both calls can be played again (the owner's recordings); the vote reveals
// the agents, and the metrics are polled each second until complete (latency first).
(function () {
  "use strict";
  const root = document.getElementById("voice");
  if (!root) return;
  const voiceAudio = window.arenaVoiceAudio;  // voice-audio.js: the agent's playback, the waveform
  const errorBox = root.querySelector("[data-testid=error]");
  let battle = null;
  let call = null;

  function field(name, scope) { return (scope || root).querySelector("[data-field='" + name + "']"); }
  function setText(name, text, scope) {
    const el = field(name, scope);
    if (el) el.textContent = text;
  }
  function setAll(name, text) {
    root.querySelectorAll("[data-field='" + name + "']").forEach(function (el) { el.textContent = text; });
  }

  function setState(state) {
    root.dataset.state = state;
    root.querySelectorAll("[data-show]").forEach(function (el) {
      el.hidden = el.dataset.show.split(" ").indexOf(state) < 0;
    });
  }

  function showError(message) {
    errorBox.textContent = message || "";
    errorBox.hidden = !message;
  }

  // A write to the API shows it comes from this site: JSON, and the page's CSRF token (the
  // one htmx sends, from the body's hx-headers), beside the Origin the browser adds.
  function writeHeaders() {
    let headers = {};
    try { headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}"); } catch (e) { headers = {}; }
    headers["Content-Type"] = "application/json";
    return headers;
  }

  async function api(method, url, body, humanToken) {
    const headers = method === "GET" ? {} : writeHeaders();
    if (humanToken) headers["X-Turnstile-Token"] = humanToken;
    const response = await fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: method === "GET" ? undefined : JSON.stringify(body || {}),
    });
    // The human check asked of this voter (only when it is on): pass it, send again.
    if (response.status === 428 && !humanToken && window.arenaHumanCheck) {
      return api(method, url, body, await window.arenaHumanCheck());
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      throw new Error((data && data.detail) || ("The server answered " + response.status + "."));
    }
    return data;
  }

  function minutes(seconds) {
    const s = Math.max(0, Math.round(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function summary(conversation) {
    if (!conversation) return "";
    const turns = conversation.turns + " turn" + (conversation.turns === 1 ? "" : "s");
    const length = conversation.duration_seconds != null ? ", " + minutes(conversation.duration_seconds) : "";
    return turns + length + (conversation.end_reason ? " (" + conversation.end_reason + ")" : "") + ".";
  }

  function showBattle(data) {
    battle = data;
    const s = data.scenario;
    setText("name", s.name, root.querySelector("[data-testid=scenario]"));
    setText("category", s.category.replace("_", " "));
    setText("difficulty", s.difficulty);
    setText("limits", "up to " + s.max_turns + " turns, " + minutes(s.max_duration_seconds));
    setText("task", s.description_for_user);
    const twists = field("twists");
    twists.hidden = !s.adversarial_turns.length;
    twists.textContent = s.adversarial_turns.length ? "Try this too: " + s.adversarial_turns.join(" ") : "";
    setAll("summary-a", summary(data.conversations.a));
    setAll("summary-b", summary(data.conversations.b));
    ["a", "b"].forEach(function (label) {  // the finished calls, to listen to again
      const player = field("replay-" + label);
      const conversation = data.conversations[label];
      const url = conversation && conversation.recording_url;
      if (url && player.getAttribute("src") !== url) player.src = url;
    });
  }

  function stateOf(data) {
    if (data.reveal) return "revealed";
    const a = data.conversations.a, b = data.conversations.b;
    if (a && b && a.status === "done" && b.status === "done") return "voting";
    if (a && a.status === "done") return "transition";
    return "briefing";
  }

  async function generate() {
    showError("");
    try {
      const data = await api("POST", "/battles/generate", { battle_type: "agent" });
      showBattle(data);
      setState("briefing");
    } catch (e) { showError(e.message); }
  }

  // -- a call ---------------------------------------------------------------------------

  function addLine(role, text, final) {
    const list = field("transcript");
    let last = list.lastElementChild;
    if (!last || last.dataset.final === "true" || last.dataset.role !== role) {
      last = document.createElement("li");
      last.dataset.role = role;
      list.appendChild(last);
    }
    last.dataset.final = final ? "true" : "false";
    last.textContent = (role === "user" ? "You: " : "Agent: ") + text;
    list.scrollTop = list.scrollHeight;
  }

  async function openMicrophone() {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      throw new Error("This browser cannot use a microphone here (it needs HTTPS or localhost).");
    }
    try {
      return await navigator.mediaDevices.getUserMedia({
        // Echo cancellation keeps the agent from hearing itself through the speakers; gain
        // control and noise suppression are left off: they clip and smear speech, and both
        // agents are transcribed from what arrives.
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
      });
    } catch (e) {
      if (e && (e.name === "NotAllowedError" || e.name === "SecurityError")) {
        throw new Error("The microphone was refused. Allow it in the address bar, then press Talk again.");
      }
      if (e && (e.name === "NotFoundError" || e.name === "OverconstrainedError")) {
        throw new Error("No microphone was found. Plug one in, then press Talk again.");
      }
      throw new Error("The microphone could not be opened (" + (e && e.name || "error")
        + "). Check the browser's microphone settings, then press Talk again.");
    }
  }

  async function talk(label) {
    showError("");
    field("transcript").textContent = "";
    let stream;
    try { stream = await openMicrophone(); } catch (e) { showError(e.message); return; }
    const context = new AudioContext();
    await context.audioWorklet.addModule(root.dataset.worklet);
    const sourceNode = context.createMediaStreamSource(stream);
    const capture = new AudioWorkletNode(context, "pcm-capture", { processorOptions: { targetRate: 16000 } });
    const mute = context.createGain();
    mute.gain.value = 0;
    sourceNode.connect(capture);
    capture.connect(mute).connect(context.destination);  // keeps the worklet pulled
    const callerWave = voiceAudio.analyser(context);
    const agentWave = voiceAudio.analyser(context);
    sourceNode.connect(callerWave);
    agentWave.connect(context.destination);
    const player = new voiceAudio.Player(context, agentWave);
    const waveform = new voiceAudio.Waveform(field("waveform"), callerWave, agentWave);
    const slot = battle.agents.filter(function (a) { return a.label === label; })[0];
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + location.host + slot.stream_url);
    socket.binaryType = "arraybuffer";
    call = { label: label, socket: socket, context: context, stream: stream, waveform: waveform,
             ended: false, started: null, timer: null };
    setText("agent", label.toUpperCase());
    setText("agent-state", "connecting…");
    setText("timer", "0:00");
    setState("conversing_" + label);

    capture.port.onmessage = function (event) {
      if (socket.readyState === WebSocket.OPEN && call && !call.ended) socket.send(event.data.pcm);
    };
    socket.onmessage = function (event) {
      if (typeof event.data !== "string") { player.play(event.data); return; }
      const message = JSON.parse(event.data);
      if (message.type === "started") {
        call.started = Date.now();
        call.timer = setInterval(function () { setText("timer", minutes((Date.now() - call.started) / 1000)); }, 250);
        setText("agent-state", "listening");
      } else if (message.type === "transcript") {
        addLine(message.role, message.text, message.final);
      } else if (message.type === "status") {
        setText("agent-state", message.state);
        if (message.state === "interrupted") player.stop();
      } else if (message.type === "tool_call") {
        setText("agent-state", "looking something up");
      } else if (message.type === "error") {
        showError(message.detail);
      } else if (message.type === "session_end") {
        if (message.error) showError(message.error);
        finishCall(message.error ? "failed" : "done");
      }
    };
    socket.onclose = function () {
      if (call && !call.ended) {
        showError("The connection dropped. What was said so far is saved.");
        finishCall("dropped");
      }
    };
  }

  async function finishCall() {
    if (!call || call.ended) return;
    call.ended = true;
    clearInterval(call.timer);
    call.waveform.stop();
    call.stream.getTracks().forEach(function (t) { t.stop(); });
    const context = call.context;
    setTimeout(function () { context.close(); }, 1500);  // let the last words play out
    call = null;
    try {
      const data = await api("GET", "/battles/" + battle.battle_id);
      showBattle(data);
      if (data.status === "failed") {
        showError((data.error || "An agent failed.") + " Start a new battle.");
        setState("idle");
        return;
      }
      setState(stateOf(data));
    } catch (e) { showError(e.message); }
  }

  function endCall() {
    if (call && call.socket.readyState === WebSocket.OPEN) call.socket.send(JSON.stringify({ type: "end" }));
  }

  // -- vote and reveal --------------------------------------------------------------------

  async function vote(form) {
    showError("");
    const data = new FormData(form);
    const subVotes = {};
    ["naturalness", "speed", "understanding", "helpfulness"].forEach(function (k) {
      if (data.get(k)) subVotes[k] = data.get(k);
    });
    const button = form.querySelector("[type=submit]");
    button.disabled = true;
    try {
      const result = await api("POST", "/battles/" + battle.battle_id + "/vote",
        { overall: data.get("overall"), sub_votes: subVotes,
          publish_text: data.get("publish_text") === "1" });
      showBattle(result);
      reveal(result.reveal);
      setState("revealed");
      pollMetrics(battle.battle_id);
    } catch (e) { showError(e.message); button.disabled = false; }
  }

  function reveal(agents) {
    ["a", "b"].forEach(function (label) {
      const card = root.querySelector(".reveal-card[data-agent=" + label + "]");
      const agent = agents[label];
      setText("name", agent.name, card);
      setText("provider", agent.provider_name, card);
      setText("architecture", agent.architecture_name, card);
      field("demo", card).hidden = !agent.offline_demo;
      setText("components", Object.keys(agent.components).map(function (k) {
        return k.toUpperCase() + ": " + agent.components[k];
      }).join(" · "), card);
      field("rec-caller", card).src = "/voice/" + battle.battle_id + "/recordings/" + label + "-caller.wav";
      field("rec-agent", card).src = "/voice/" + battle.battle_id + "/recordings/" + label + "-agent.wav";
    });
  }

  function ms(value) { return value == null ? "—" : Math.round(value) + " ms"; }
  function pct(value) { return value == null ? "—" : Math.round(value * 100) + "%"; }

  function fillMetrics(label, m) {
    const card = root.querySelector(".reveal-card[data-agent=" + label + "]");
    const failed = function (kind) { return m.errors[kind] ? "could not be measured: " + m.errors[kind] : null; };
    const live = m.live_latency;
    setText("live-latency", live.answered ? "avg " + ms(live.avg_ms) + " · p50 " + ms(live.p50_ms) + " · p95 "
      + ms(live.p95_ms) + " (" + live.answered + " answer" + (live.answered === 1 ? "" : "s") + ")"
      : "no answered turns", card);
    if (m.latency) {
      setText("latency", m.latency.avg_ms == null ? "no answered turns"
        : "avg " + ms(m.latency.avg_ms) + " · p50 " + ms(m.latency.p50_ms) + " · p95 " + ms(m.latency.p95_ms)
          + " · first " + ms(m.latency.first_response_ms), card);
      const reported = m.latency.provider_reported;
      setText("provider-latency", reported && reported.avg_latency_ms != null
        ? "avg " + ms(reported.avg_latency_ms) + " · p50 " + ms(reported.p50_latency_ms) : "—", card);
    } else if (failed("latency")) { setText("latency", failed("latency"), card); }
    if (m.transcript != null) setText("transcript-full", m.transcript || "(nothing was heard)", card);
    else if (failed("transcript")) setText("transcript-full", failed("transcript"), card);
    const e = m.evaluation;
    if (e) {
      setText("task", e.task_success == null ? "— not judged" : e.task_success ? "✓ succeeded" : "✗ not achieved", card);
      const slots = Object.keys(e.slots);
      setText("slots", pct(e.joint_goal_accuracy) + (slots.length ? " (" + slots.map(function (k) {
        return (e.slots[k] ? "✓ " : "✗ ") + k;
      }).join(", ") + ")" : ""), card);
      setText("quality", pct(e.coherence) + " · " + pct(e.instruction_following), card);
      setText("hallucinations", e.hallucination_count == null ? "—" : String(e.hallucination_count), card);
      setText("containment", (e.containment == null ? "—" : e.containment ? "contained" : "handed on") + " · "
        + (e.turns_to_completion == null ? "not completed" : e.turns_to_completion + " turn" + (e.turns_to_completion === 1 ? "" : "s")), card);
      setText("reason", e.reason, card);
    } else if (failed("judge")) {
      setText("task", failed("judge"), card);
    }
  }

  async function pollMetrics(battleId) {
    let data;
    try { data = await api("GET", "/battles/" + battleId + "/agent-metrics"); } catch (e) {
      showError(e.message);
      return;
    }
    if (!battle || battle.battle_id !== battleId) return;
    const words = { computing: "Measuring the calls…", partial: "Latency measured; the judge is reading the calls…",
                    complete: "All metrics are in." };
    setText("metrics-status", words[data.status]);
    field("metrics-status").dataset.status = data.status;
    Object.keys(data.conversations).forEach(function (label) { fillMetrics(label, data.conversations[label]); });
    if (data.status !== "complete") setTimeout(function () { pollMetrics(battleId); }, 1000);
  }

  // -- wiring -----------------------------------------------------------------------------

  root.addEventListener("click", function (event) {
    const button = event.target.closest("[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "generate") generate();
    else if (action === "again") location.assign(location.pathname + "?new=1");
    else if (action === "talk") talk(button.dataset.agent);
    else if (action === "end") endCall();
  });
  const form = root.querySelector("form.vote");
  if (form) form.addEventListener("submit", function (event) { event.preventDefault(); vote(form); });
  setState("idle");
  if (new URLSearchParams(location.search).get("new") && root.querySelector("[data-action=generate]")) {
    history.replaceState(null, "", location.pathname);
    generate();
  }
})();
