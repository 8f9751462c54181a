// The console's one stylesheet, served from /console/console.css (the CSP allows styles from 'self' only). A
// string in a module, so the built package carries it without an asset step.
export const CONSOLE_CSS = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
header { display: flex; justify-content: space-between; align-items: center; background: #14213d; color: #fff; padding: 0.5rem 1rem; }
header a { color: #fff; }
header a[aria-current="page"] { font-weight: bold; text-decoration-thickness: 3px; }
nav ul { list-style: none; display: flex; gap: 1rem; margin: 0; padding: 0; }
.who form { display: inline; }
main { padding: 1rem 1.5rem; max-width: 80rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1.5rem; background: #fff; }
caption { text-align: left; font-weight: bold; padding: 0.25rem 0; }
th, td { border: 1px solid #c8c8c8; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.85em; word-break: break-all; }
form.action { display: inline-block; margin: 0 0.25rem 0.25rem 0; }
button { font: inherit; padding: 0.2rem 0.7rem; border: 1px solid #14213d; background: #fff; color: #14213d; cursor: pointer; }
button:focus, a:focus, input:focus { outline: 3px solid #fca311; outline-offset: 1px; }
label { display: block; margin: 0.5rem 0 0.2rem; }
input[type="text"], input[type="password"] { font: inherit; padding: 0.3rem; width: 18rem; max-width: 100%; }
.flash.ok { color: #14532d; }
.flash.error { color: #8b1010; }
.pager a { margin-right: 1rem; }
`;
