// Test tool only: evaluates IAM requests with @cloud-copilot/iam-simulate (AGPL-3.0-or-later).
// Never imported by the library; driven by tests/iam/simulator.py, one process per batch.
//
// stdin:  {"principal": ARN, "identityPolicies": [{"name", "policy"}], "resourcePolicy": {...}?,
//          "permissionBoundaryPolicies": [{"name", "policy"}]?,
//          "requests": [{"action", "resource", "accountId", "context": {key: str | [str]}}]}
// stdout: [{"decision": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied",
//           "ignoredContextKeys": [...]} | {"error": message, "details": {...}}], one per request.
// Several principals in one process: stdin {"batches": [batch, ...]}, stdout [[result...], ...].
import { runSimulation } from '@cloud-copilot/iam-simulate'

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

function ignoredKeys(response) {
  if (response.resultType === 'single') return response.result.ignoredContextKeys ?? []
  return [...new Set(response.results.flatMap((r) => r.ignoredContextKeys ?? []))]
}

async function evaluate(batch, request) {
  const simulation = {
    request: {
      principal: batch.principal,
      action: request.action,
      resource: { resource: request.resource, accountId: request.accountId },
      contextVariables: request.context ?? {}
    },
    identityPolicies: batch.identityPolicies,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(batch.resourcePolicy ? { resourcePolicy: batch.resourcePolicy } : {}),
    ...(batch.permissionBoundaryPolicies
      ? { permissionBoundaryPolicies: batch.permissionBoundaryPolicies }
      : {})
  }
  // Strict mode: the request is evaluated exactly as given (no "discovery" of missing keys).
  const response = await runSimulation(simulation, { simulationMode: 'Strict' })
  if (response.resultType === 'error') {
    return { error: response.errors.message, details: response.errors }
  }
  return { decision: response.overallResult, ignoredContextKeys: ignoredKeys(response) }
}

async function run(batch) {
  const results = []
  for (const request of batch.requests) {
    results.push(await evaluate(batch, request))
  }
  return results
}

const input = await readStdin()
let output
if (Array.isArray(input.batches)) {
  output = []
  for (const batch of input.batches) output.push(await run(batch))
} else {
  output = await run(input)
}
process.stdout.write(JSON.stringify(output))
