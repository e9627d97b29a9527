'use strict';
// Starts the PCSC language server (`pcsc lsp`, over stdio) for `pcsc` documents
// (.route and .obl files). The command is the `pcsc.server.path` setting, its arguments
// `pcsc.server.args`; a change to either restarts the server.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

const SECTION = 'pcsc';
let client;

/** The command that starts the server, read from the settings. */
function serverCommand(config) {
    const command = (config.get('server.path') || 'pcsc').trim() || 'pcsc';
    const args = config.get('server.args');
    return { command, args: Array.isArray(args) ? args.map(String) : ['lsp'] };
}

function createClient() {
    const { command, args } = serverCommand(vscode.workspace.getConfiguration(SECTION));
    // no `transport`: the client talks over the process's stdin/stdout without adding `--stdio`
    const run = { command, args };
    const clientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'pcsc' },
            { scheme: 'untitled', language: 'pcsc' },
        ],
        // a library or the policy configuration changing can change a route's diagnostics
        synchronize: {
            fileEvents: vscode.workspace.createFileSystemWatcher('**/{*.obl,pcsc.toml,pyproject.toml}'),
        },
    };
    return new LanguageClient(SECTION, 'PCSC language server', { run, debug: run }, clientOptions);
}

async function startClient() {
    client = createClient();
    try {
        await client.start();
    } catch (err) {
        const { command, args } = serverCommand(vscode.workspace.getConfiguration(SECTION));
        vscode.window.showErrorMessage(
            `PCSC: could not start the language server \`${[command, ...args].join(' ')}\` ` +
            `(${err && err.message ? err.message : err}). Install it with ` +
            "`python3 -m pip install 'pcsc[lsp]'` or set `pcsc.server.path`.");
    }
    return client;
}

async function stopClient() {
    const old = client;
    client = undefined;
    if (old && old.isRunning()) {
        await old.stop();
    }
}

async function activate(context) {
    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration(async (event) => {
            if (event.affectsConfiguration('pcsc.server')) {
                await stopClient();
                await startClient();
            }
        }),
        vscode.commands.registerCommand('pcsc.restartServer', async () => {
            await stopClient();
            await startClient();
        }),
        { dispose: () => { stopClient(); } },
    );
    await startClient();
    return { get client() { return client; } };
}

function deactivate() {
    return stopClient();
}

module.exports = { activate, deactivate, serverCommand };
