// node-agent: one process per board that owns native hardware code (ARCHITECTURE.md). The link to the
// brain and the serial/BLE adapters arrive with the hardware issue; until then it says so and exits
// with EX_UNAVAILABLE so systemd does not restart-loop it.
process.stderr.write('svc node-agent: the hardware link is not available in this version of svc\n');
process.exitCode = 69;
