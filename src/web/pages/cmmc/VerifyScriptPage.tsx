// Public /verify-script: checks the signature line of a Rampart device-check script in this
// browser (WebCrypto Ed25519). The file never leaves the computer; only the public key is fetched.
// CRLF line endings (a Windows editor or mail client) are tolerated.
import { Alert, Anchor, Code, FileInput, Loader, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { AuthLayout } from '../../components/AuthLayout.tsx';
import { ErrorState } from '../../components/QueryStates.tsx';
import { signingKeyQuery, verifyScriptInBrowser, type ScriptVerdict } from '../../lib/cmmc-api.ts';

const REASONS: Record<Exclude<ScriptVerdict, { valid: true }>['reason'], string> = {
  no_signature:
    'This file has no Rampart signature line at its end. It is not a script Rampart generated, or its last line was removed.',
  bad_signature:
    'The signature does not match the file: it was changed after Rampart generated it, or it was signed with another key. Do not run it.',
  unsupported: 'This browser could not check the signature.',
};

export function VerifyScriptPage() {
  const key = useQuery(signingKeyQuery);
  const [file, setFile] = useState<File | null>(null);
  const [verdict, setVerdict] = useState<ScriptVerdict | null>(null);
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const choose = async (f: File | null) => {
    setFile(f);
    setVerdict(null);
    setError(null);
    if (!f || !key.data) return;
    setChecking(true);
    try {
      setVerdict(await verifyScriptInBrowser(await f.arrayBuffer(), key.data));
    } catch (e) {
      setError(e);
    } finally {
      setChecking(false);
    }
  };

  return (
    <AuthLayout
      title="Verify a device-check script"
      subtitle="Check that a Rampart CMMC device-check script is exactly as Rampart generated it, before you run it. The file is checked in this browser and is not uploaded."
    >
      <Stack gap="md">
        {key.isError ? (
          <ErrorState
            error={key.error}
            title="Could not load Rampart's signing key"
            onRetry={() => void key.refetch()}
          />
        ) : (
          <FileInput
            label="Script file"
            description="rampart-cmmc-check-windows.ps1 or rampart-cmmc-check-macos.sh"
            placeholder="Choose a file"
            clearable
            disabled={!key.data}
            value={file}
            onChange={(f) => void choose(f)}
            name="script"
          />
        )}
        {checking && <Loader size="sm" aria-label="Checking the signature" />}
        {error !== null && <ErrorState error={error} title="Could not read the file" />}
        {verdict && (
          <div
            role="status"
            aria-live="polite"
            data-testid="verify-result"
            data-valid={verdict.valid ? 'true' : 'false'}
          >
            {verdict.valid ? (
              <Alert color="green" variant="light" title="Valid signature">
                <Text size="sm">
                  {file?.name} was signed by Rampart&apos;s device-check key and has not been changed
                  {verdict.lineEndings === 'crlf' ? ' (apart from its line endings, which were converted to CRLF)' : ''}
                  .
                </Text>
              </Alert>
            ) : (
              <Alert color="red" variant="light" title="Not a valid Rampart signature">
                <Text size="sm">{verdict.detail ?? REASONS[verdict.reason]}</Text>
              </Alert>
            )}
          </div>
        )}
        {key.data && (
          <Table withTableBorder fz="sm" layout="fixed">
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w="40%">Signing key</Table.Th>
                <Table.Td>
                  {key.data.algorithm},{' '}
                  <Anchor href="/api/public/cmmc/signing-key" target="_blank" rel="noopener">
                    public key
                  </Anchor>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Key fingerprint (SHA-256)</Table.Th>
                <Table.Td>
                  <Code className="mono-break" data-testid="key-fingerprint">
                    {key.data.fingerprint}
                  </Code>
                </Table.Td>
              </Table.Tr>
              {verdict && verdict.fileSha256 && (
                <Table.Tr>
                  <Table.Th>File fingerprint (SHA-256)</Table.Th>
                  <Table.Td>
                    <Code className="mono-break" data-testid="file-fingerprint">
                      {verdict.fileSha256}
                    </Code>
                  </Table.Td>
                </Table.Tr>
              )}
              {verdict?.valid && verdict.signedSha256 !== verdict.fileSha256 && (
                <Table.Tr>
                  <Table.Th>Fingerprint as generated (LF line endings)</Table.Th>
                  <Table.Td>
                    <Code className="mono-break" data-testid="signed-fingerprint">
                      {verdict.signedSha256}
                    </Code>
                  </Table.Td>
                </Table.Tr>
              )}
            </Table.Tbody>
          </Table>
        )}
        <Text size="xs" c="dimmed">
          Compare the file fingerprint with the SHA-256 shown in Rampart&apos;s Device check tab when the script was
          issued. The signature covers every byte before the script&apos;s last line,{' '}
          <Code>{'# RAMPART-SIGNATURE v1 ed25519 …'}</Code>.
        </Text>
      </Stack>
    </AuthLayout>
  );
}
