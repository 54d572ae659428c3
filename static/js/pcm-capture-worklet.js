// AudioWorklet: the microphone at the context's rate → 16 kHz 16-bit mono PCM in 20 ms
// frames (320 samples), posted to the page.
// Downsampling averages the input samples that fall into each output sample (a box
// low-pass), which is enough for speech at 16 kHz.
class PcmCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.target = (options.processorOptions && options.processorOptions.targetRate) || 16000;
    this.step = sampleRate / this.target;  // input samples per output sample
    this.position = 0;                      // where the next output sample ends, in input samples
    this.sum = 0;
    this.count = 0;
    this.frame = new Int16Array(320);
    this.filled = 0;
  }

  process(inputs) {
    const input = inputs[0];
    if (!input || !input[0]) return true;
    const channel = input[0];
    for (let i = 0; i < channel.length; i++) {
      this.sum += channel[i];
      this.count += 1;
      this.position += 1;
      if (this.position >= this.step) {
        this.position -= this.step;
        const value = Math.max(-1, Math.min(1, this.sum / this.count));
        this.sum = 0;
        this.count = 0;
        this.frame[this.filled++] = value < 0 ? value * 32768 : value * 32767;
        if (this.filled === this.frame.length) {
          this.port.postMessage({ pcm: this.frame.buffer }, [this.frame.buffer]);
          this.frame = new Int16Array(320);
          this.filled = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor("pcm-capture", PcmCapture);
