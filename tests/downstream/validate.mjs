// Runs the Khronos glTF validator on every file named on the command line and
// prints one JSON line per file: {file, errors, warnings, infos, hints, issues}.
// Policy (what may appear) is the caller's: tests/downstream/downstream.py.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import validator from 'gltf-validator';

for (const file of process.argv.slice(2)) {
  const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), {
    uri: file,
    maxIssues: 0,
    externalResourceFunction: async (uri) =>
      new Uint8Array(readFileSync(resolve(dirname(file), decodeURIComponent(uri)))),
  });
  const sev = ['error', 'warning', 'info', 'hint'];
  console.log(JSON.stringify({
    file,
    validator: report.validatorVersion,
    errors: report.issues.numErrors,
    warnings: report.issues.numWarnings,
    infos: report.issues.numInfos,
    hints: report.issues.numHints,
    animations: report.info ? report.info.animationCount : 0,
    issues: report.issues.messages.map((m) => ({
      severity: sev[m.severity] ?? String(m.severity), code: m.code, pointer: m.pointer ?? '', message: m.message,
    })),
  }));
}
