// The one-time display of recovery codes, with copy and download.
import { Alert, Button, CopyButton, Group, Paper, Stack, Text } from '@mantine/core';

function download(codes: string[]) {
  const text = `Rampart recovery codes (${new Date().toISOString().slice(0, 10)})\nEach code works once.\n\n${codes.join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = 'rampart-recovery-codes.txt';
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <Stack gap="sm">
      <Alert color="yellow" variant="light" role="note" title="Save these recovery codes now">
        Each code signs you in once if you lose your authenticator. They are shown only this time; keep them in a
        password manager.
      </Alert>
      <Paper withBorder p="md" radius="md" bg="var(--mantine-color-default-hover)">
        <ul className="recovery-codes" aria-label="Recovery codes" data-testid="recovery-codes">
          {codes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      </Paper>
      <Group gap="sm">
        <CopyButton value={codes.join('\n')}>
          {({ copied, copy }) => (
            <Button variant="default" size="xs" onClick={copy}>
              {copied ? 'Copied' : 'Copy recovery codes'}
            </Button>
          )}
        </CopyButton>
        <Button variant="default" size="xs" onClick={() => download(codes)}>
          Download as text file
        </Button>
      </Group>
      <Text size="xs" c="dimmed">
        {codes.length} codes
      </Text>
    </Stack>
  );
}
