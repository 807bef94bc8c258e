// Config and secret files are written atomically (STYLE.md 11); the capabilities' way to it. The one
// implementation is mesh/atomic-write.ts, shared with signing/ and the CLI.
export { writeFileAtomic } from '../../mesh/atomic-write';
