// The audio of a voice call, for voice.js: the agent's 16 kHz PCM played back gaplessly from
// an AudioContext buffer queue, and both voices drawn live on a canvas from their
// AnalyserNodes. Exposed as window.arenaVoiceAudio (no module loader; the CSP allows only
// the arena's own files).
(function () {
  "use strict";

  function Player(context, output) {
    this.context = context;
    this.output = output;
    this.next = 0;
    this.sources = [];
  }
  Player.prototype.play = function (buffer) {
    const samples = new Int16Array(buffer);
    if (!samples.length) return;
    const audio = this.context.createBuffer(1, samples.length, 16000);
    const channel = audio.getChannelData(0);
    for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
    const source = this.context.createBufferSource();
    source.buffer = audio;
    source.connect(this.output);
    const now = this.context.currentTime;
    if (this.next < now + 0.02) this.next = now + 0.05;  // start (or restart) with a little slack
    source.start(this.next);
    this.next += audio.duration;
    this.sources.push(source);
    const sources = this.sources;
    source.onended = function () { const i = sources.indexOf(source); if (i >= 0) sources.splice(i, 1); };
  };
  Player.prototype.stop = function () {  // barge-in: drop what is queued
    this.sources.forEach(function (s) { try { s.stop(); } catch (e) { /* already ended */ } });
    this.sources = [];
    this.next = 0;
  };

  // Both voices as they are heard: the caller's above the middle line, the agent's below,
  // each from its own AnalyserNode, redrawn every animation frame until the call ends.
  function Waveform(canvas, caller, agent) {
    this.canvas = canvas;
    this.lanes = [{ analyser: caller, colour: "--left" }, { analyser: agent, colour: "--right" }];
    this.samples = new Float32Array(caller.fftSize);
    this.running = true;
    const style = getComputedStyle(canvas);
    this.lanes.forEach(function (lane) { lane.colour = style.getPropertyValue(lane.colour).trim() || "#888"; });
    this.line = style.getPropertyValue("--border").trim() || "#ccc";
    const self = this;
    requestAnimationFrame(function draw() {
      if (!self.running) return;
      self.draw();
      requestAnimationFrame(draw);
    });
  }
  Waveform.prototype.draw = function () {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, width, height);
    g.fillStyle = this.line;
    g.fillRect(0, Math.floor(height / 2), width, Math.max(1, Math.round(ratio)));
    const samples = this.samples;
    const lane = height / 2;
    this.lanes.forEach(function (each, index) {
      each.analyser.getFloatTimeDomainData(samples);
      const middle = lane * index + lane / 2;
      g.strokeStyle = each.colour;
      g.lineWidth = 1.5 * ratio;
      g.beginPath();
      for (let x = 0; x < width; x++) {
        const value = samples[Math.floor(x * samples.length / width)];
        const y = middle - Math.max(-1, Math.min(1, value * 2)) * (lane / 2 - ratio);
        if (x === 0) g.moveTo(x, y); else g.lineTo(x, y);
      }
      g.stroke();
    });
  };
  Waveform.prototype.stop = function () { this.running = false; };

  function analyser(context) {
    const node = context.createAnalyser();
    node.fftSize = 2048;
    return node;
  }

  window.arenaVoiceAudio = { Player: Player, Waveform: Waveform, analyser: analyser };
})();
