// Starts `factory lsp` for .fwf files. Everything else (diagnostics, hover, rename,
// formatting, ...) comes from the server.
import { workspace, ExtensionContext, window } from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

export async function activate(context: ExtensionContext): Promise<void> {
  const command = workspace.getConfiguration('factory').get<string>('path') || 'factory';
  const serverOptions: ServerOptions = {
    run: { command, args: ['lsp'] },
    debug: { command, args: ['lsp'] },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'fwf' }],
    synchronize: {
      // The server also registers these itself; listing them helps older VS Code versions.
      fileEvents: [
        workspace.createFileSystemWatcher('**/*.fwf'),
        workspace.createFileSystemWatcher('**/prompts/*.md'),
      ],
    },
  };
  client = new LanguageClient('factory', 'Factory language server', serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    window.showErrorMessage(
      `Could not start \`${command} lsp\`: ${err}. Install factory or set "factory.path".`,
    );
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
