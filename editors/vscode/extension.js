// The smallest VS Code client for `gpulint lsp`: start the server over stdio for YAML
// documents, saved or not; everything else (diagnostics, quick fixes, hover, completion)
// comes from the server.
"use strict";
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("gpulint");
  const [command, ...args] = settings.get("command", ["gpulint", "lsp"]);
  client = new LanguageClient(
    "gpulint",
    "gpulint",
    { command, args, transport: TransportKind.stdio },
    {
      documentSelector: [
        { scheme: "file", language: "yaml" },
        { scheme: "untitled", language: "yaml" },
      ],
      // gpulint.render (user settings only: it runs helm and kubectl on the workspace),
      // at start and on every change (workspace/didChangeConfiguration, {gpulint: {...}}).
      initializationOptions: { render: settings.get("render", false) === true },
      synchronize: { configurationSection: "gpulint" },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
