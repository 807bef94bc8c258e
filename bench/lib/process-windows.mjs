// Windows over live processes for bench sections: from the call to stop(), their CPU (ms and % of one
// core), their write syscalls and bytes (/proc/<pid>/io: `syscw`, `wchar`, and `write_bytes`, what
// reached the block layer), and their peak RSS (VmRSS sampled every 200 ms, and the kernel's VmHWM).
// Each takes named pids ({ a: pid, b: pid }) and answers by the same names.
import { readFileSync } from 'node:fs';
import { cpuOf, round } from './brain.mjs';

const statusKib = (pid, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const mib = (kib) => round(kib / 1024, 1);

/** Samples VmRSS of each named pid every 200 ms; stop() gives the peak sampled and VmHWM (the kernel's own peak) of each. */
export function sampleRss(pids) {
  const peak = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const take = () => {
    for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name], statusKib(pid, 'VmRSS'));
  };
  take();
  const timer = setInterval(take, 200);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, { peak_rss_mib: mib(peak[name]), vm_hwm_mib: mib(statusKib(pid, 'VmHWM')) }]));
    },
  };
}

/** CPU of each named pid from now: stop() gives its CPU ms and % of one core over the wall time between. */
export function cpuWindow(pids) {
  const t0 = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuOf(pid).ms]));
  return {
    stop: () => {
      const wall = performance.now() - t0;
      return Object.fromEntries(Object.entries(pids).map(([name, pid]) => {
        const ms = cpuOf(pid).ms - before[name];
        return [name, { cpu_ms: Math.round(ms), cpu_pct_of_one_core: round((ms / wall) * 100, 1) }];
      }));
    },
  };
}

/** Read and write syscalls and bytes of each named pid from now (/proc/<pid>/io): what its store did to the disk. */
export function ioWindow(pids) {
  const read = (pid) => Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((l) => l.split(': ')).map(([k, v]) => [k, Number(v)]));
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, read(pid)]));
  return {
    stop: () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => {
      const now = read(pid);
      return [name, { write_syscalls: now.syscw - before[name].syscw, written_bytes: now.wchar - before[name].wchar, disk_write_bytes: now.write_bytes - before[name].write_bytes }];
    })),
  };
}

/** An ioWindow result divided by `ops`: write syscalls and bytes per op. */
export const perOp = (io, ops) => Object.fromEntries(Object.entries(io).map(([name, v]) => [name, { write_syscalls: round(v.write_syscalls / ops, 1), written_bytes: Math.round(v.written_bytes / ops), disk_write_bytes: Math.round(v.disk_write_bytes / ops) }]));
