'use strict';
// Runs the extension's activate() under plain node, against test/vscode-shim.js in place
// of the `vscode` module (no VS Code binary needed), with the real vscode-languageclient.
// Reads a scenario as JSON on stdin: {extension (its folder), settings, documents: [{file, languageId}],
// workspaceFolder, timeoutMs}; prints what happened as JSON: the processes the client
// spawned, its document selector, the server's initialize result, the diagnostics
// published per document, what was registered, messages shown, and whether the server
// exited after deactivate().
const fs = require('fs');
const Module = require('module');
const childProcess = require('child_process');
const path = require('path');
const { createShim } = require('./vscode-shim');

async function main() {
    const scenario = JSON.parse(fs.readFileSync(0, 'utf8'));
    const documents = (scenario.documents || []).map((d) => ({
        file: path.resolve(d.file), languageId: d.languageId || 'pcsc', text: fs.readFileSync(d.file, 'utf8'),
    }));
    const { vscode, record } = createShim({ settings: scenario.settings || {}, documents, workspaceFolder: scenario.workspaceFolder });
    const realLoad = Module._load;
    Module._load = function load(request, ...rest) {
        return request === 'vscode' ? vscode : realLoad.call(this, request, ...rest);
    };
    const spawned = [];
    const realSpawn = childProcess.spawn;
    childProcess.spawn = function spawn(command, args, options) {
        const child = realSpawn.call(this, command, args, options);
        const entry = { command, args, pid: child.pid || null, exited: false };
        child.on('exit', () => { entry.exited = true; });
        child.on('error', (err) => { entry.error = String(err.message || err); });
        spawned.push(entry);
        return child;
    };

    // the extension folder: an unpacked .vsix's `extension/`, or this checkout's
    const folder = path.resolve(scenario.extension || path.join(__dirname, '..'));
    const extension = require(path.join(folder, 'extension.js'));
    const context = { subscriptions: [], extensionPath: folder, globalState: { get() {}, update() {} } };
    const timeout = scenario.timeoutMs || 60000;
    const api = await extension.activate(context);
    const client = api.client;
    const result = {
        spawned, documentSelector: client.clientOptions.documentSelector, running: client.isRunning(),
        initialize: client.initializeResult ? { serverInfo: client.initializeResult.serverInfo,
            capabilities: Object.keys(client.initializeResult.capabilities).sort() } : null,
    };
    // wait for a publishDiagnostics on every open document
    const wanted = documents.map((d) => vscode.Uri.file(d.file).toString());
    const deadline = Date.now() + timeout;
    while (result.running && wanted.some((u) => !(u in record.diagnostics)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const d of context.subscriptions) { if (d && d.dispose) { d.dispose(); } }
    await extension.deactivate();
    const stopDeadline = Date.now() + 10000;
    while (spawned.some((s) => s.pid && !s.exited) && Date.now() < stopDeadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    Object.assign(result, {
        diagnostics: record.diagnostics, registered: record.registered, commands: record.commands,
        messages: record.messages, unknown: [...record.unknown].sort(), runningAfterDeactivate: client.isRunning(),
    });
    process.stdout.write(JSON.stringify(result, null, 1) + '\n');
}

main().then(() => process.exit(0), (err) => { process.stderr.write(`${err && err.stack ? err.stack : err}\n`); process.exit(1); });
