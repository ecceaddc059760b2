#!/usr/bin/env node
// ort_peer.js - the ONNX Runtime side of bench/models (issue 30): the same .onnx file our
// session runs, through onnxruntime-node's CPU provider (all graph optimisations, the given
// intra-op threads, sequential execution), what a user would pick to run these files.
// Installed outside the repository by `sh tools/deps.sh bench` (npm, pinned version, into
// $XDG_CACHE_HOME/inferbench/peers, or ~/.cache/inferbench/peers; IB_ORT_DIR overrides).
//
// Inputs are random: float tensors uniform in [-1, 1), integer tensors in [lo, hi]
// (default [0, 1]: valid ids, masks and segments for every model; --int NAME=LO,HI widens
// one input, e.g. BERT's input_ids). The first symbolic dimension of an input is the
// batch; other symbolic dimensions need --dim NAME=VALUE (e.g. seq_length=384).
//
// Prints one JSON object per batch size (bench_util.h's bu_run_peer reads them):
//   {"peer": "onnxruntime", "batch": B, "images_per_sec": median, "runs": [...],
//    "cpu_seconds": ..., "images": ...}
// Usage: node ort_peer.js --model F.onnx --batches 1,32 --threads 2 [--reps 3]
//        [--seconds 3] [--dim NAME=V]... [--int NAME=LO,HI]... [--raw NAME=FILE]...
//        [--per-sample R]
// --raw gives an input's bytes (little-endian, row-major, at least the largest batch's rows):
// the same data our session ran, where random ids would change the work (DLRM's gathers).
'use strict';

const path = require('path');
const os = require('os');

function ortDir() {
    if (process.env.IB_ORT_DIR) return process.env.IB_ORT_DIR;
    const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
    return path.join(cache, 'inferbench', 'peers', 'node_modules', 'onnxruntime-node');
}

function parseArgs(argv) {
    const a = {batches: [1], threads: 2, reps: 3, seconds: 3, dims: {}, ints: {}, raw: {},
               perSample: 1};
    for (let i = 2; i < argv.length; i++) {
        const k = argv[i], v = argv[i + 1];
        if (k === '--model') a.model = argv[++i];
        else if (k === '--batches') { a.batches = v.split(',').map(Number); i++; }
        else if (k === '--threads') { a.threads = Number(v); i++; }
        else if (k === '--reps') { a.reps = Number(v); i++; }
        else if (k === '--seconds') { a.seconds = Number(v); i++; }
        else if (k === '--per-sample') { a.perSample = Number(v); i++; }
        else if (k === '--dim') { const [n, x] = v.split('='); a.dims[n] = Number(x); i++; }
        else if (k === '--int') {
            const [n, r] = v.split('=');
            const [lo, hi] = r.split(',').map(Number);
            a.ints[n] = [lo, hi];
            i++;
        } else if (k === '--raw') {
            const [n, f] = v.split('=');
            a.raw[n] = f;
            i++;
        } else {
            console.error(`ort_peer: unknown argument ${k}`);
            process.exit(2);
        }
    }
    if (!a.model) {
        console.error('ort_peer: --model FILE.onnx is required');
        process.exit(2);
    }
    return a;
}

// Deterministic random numbers (xorshift), so both runs see the same kind of data.
let state = 0x9e3779b97f4a7c15n;
function rnd() {
    state ^= state << 13n; state &= 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= state << 17n; state &= 0xffffffffffffffffn;
    return Number(state >> 11n) / 9007199254740992;
}

function makeInput(ort, meta, batch, a) {
    let first = true;
    const shape = meta.shape.map((d) => {
        if (typeof d === 'number' && d >= 0) return d;
        if (first) { first = false; return batch; }
        if (!(d in a.dims)) {
            console.error(`ort_peer: input ${meta.name} has dimension '${d}': give --dim ${d}=N`);
            process.exit(2);
        }
        return a.dims[d];
    });
    const n = shape.reduce((x, y) => x * y, 1);
    if (a.raw[meta.name]) { // the caller's bytes (the same data our session ran), first rows
        const buf = require('fs').readFileSync(a.raw[meta.name]);
        const types = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array};
        const T = types[meta.type];
        if (!T || buf.length < n * T.BYTES_PER_ELEMENT) {
            console.error(`ort_peer: ${a.raw[meta.name]}: too small for ${meta.name} [${shape}]`);
            process.exit(2);
        }
        const copy = new Uint8Array(n * T.BYTES_PER_ELEMENT);
        copy.set(buf.subarray(0, copy.length));
        return new ort.Tensor(meta.type, new T(copy.buffer), shape);
    }
    const [lo, hi] = a.ints[meta.name] || [0, 1];
    switch (meta.type) {
    case 'float32': {
        const x = new Float32Array(n);
        for (let i = 0; i < n; i++) x[i] = rnd() * 2 - 1;
        return new ort.Tensor('float32', x, shape);
    }
    case 'int64': {
        const x = new BigInt64Array(n);
        for (let i = 0; i < n; i++) x[i] = BigInt(lo + Math.floor(rnd() * (hi - lo + 1)));
        return new ort.Tensor('int64', x, shape);
    }
    case 'int32': {
        const x = new Int32Array(n);
        for (let i = 0; i < n; i++) x[i] = lo + Math.floor(rnd() * (hi - lo + 1));
        return new ort.Tensor('int32', x, shape);
    }
    default:
        console.error(`ort_peer: input ${meta.name} is ${meta.type}, not supported here`);
        process.exit(2);
    }
}

function cpuSeconds() {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
}

async function main() {
    const a = parseArgs(process.argv);
    let ort;
    try {
        ort = require(ortDir());
    } catch (e) {
        console.error(`ort_peer: onnxruntime-node not found in ${ortDir()} (sh tools/deps.sh bench)`);
        process.exit(3);
    }
    const session = await ort.InferenceSession.create(a.model, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        intraOpNumThreads: a.threads,
        interOpNumThreads: 1,
    });
    for (const b of a.batches) {
        const feeds = {};
        for (const m of session.inputMetadata) feeds[m.name] = makeInput(ort, m, b, a);
        for (let w = 0; w < 2; w++) await session.run(feeds); // warm-up
        const rates = [];
        let cpu = 0, items = 0;
        for (let r = 0; r < a.reps; r++) {
            const t0 = process.hrtime.bigint(), c0 = cpuSeconds();
            let n = 0, dt = 0;
            do {
                await session.run(feeds);
                n++;
                dt = Number(process.hrtime.bigint() - t0) / 1e9;
            } while (dt < a.seconds);
            cpu += cpuSeconds() - c0;
            items += n * b / a.perSample;
            rates.push(n * b / a.perSample / dt);
        }
        rates.sort((x, y) => x - y);
        const med = rates[Math.floor(rates.length / 2)];
        // "key": value with a space, as Python's json.dumps writes it (bu_run_peer reads that)
        const o = {peer: 'onnxruntime', version: ort.env.versions.common, batch: b,
                   images_per_sec: med, runs: rates, cpu_seconds: cpu, images: items};
        console.log('{' + Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
            .join(', ') + '}');
    }
}

main().catch((e) => {
    console.error(`ort_peer: ${e.message}`);
    process.exit(1);
});
