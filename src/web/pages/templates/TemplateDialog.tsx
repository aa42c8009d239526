// Upload a scan template, or replace one's YAML: pick a .yaml/.yml file (read here, in the
// browser, into the text box) or paste the text. The server validates it with the template
// engine; each problem is listed with its place in the template (e.g. http[0].matchers[1].regex[0]).
// Payload files the template names (`payloads: user: helpers/wordlists/users.txt`) are picked
// beside it and sent under the path the template gives them.
import { Alert, Button, Code, FileInput, Group, List, Modal, Stack, Text, Textarea } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { ApiError, type FieldIssue } from '../../lib/api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { useTenant } from '../../lib/me.ts';
import {
  createTemplate,
  payloadPathFor,
  replaceTemplate,
  type PayloadFiles,
  templateKeys,
  templateQuery,
  type ScanTemplate,
} from '../../lib/templates-api.ts';

const MAX_BYTES = 64 * 1024;
const MAX_PAYLOAD_FILES = 20;
const MAX_PAYLOAD_BYTES = 512 * 1024;

/** Where in the template a problem is: the server names request fields, body.yaml.<path>. */
function templatePlace(path: string): string {
  if (path === 'body.yaml') return 'template';
  return path.startsWith('body.yaml.') ? path.slice('body.yaml.'.length) : path;
}

function templateIssues(error: unknown): FieldIssue[] | null {
  if (!(error instanceof ApiError) || error.code !== 'validation_failed' || !Array.isArray(error.details)) return null;
  return (error.details as FieldIssue[]).filter((d) => typeof d?.path === 'string' && typeof d.message === 'string');
}

export function TemplateDialog({
  opened,
  onClose,
  replacing,
}: {
  opened: boolean;
  onClose: () => void;
  replacing?: ScanTemplate | null;
}) {
  const title = replacing ? `Replace ${replacing.templateId}` : 'Upload template';
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={title}
      size="xl"
      closeButtonProps={{ 'aria-label': `Close ${title.toLowerCase()}` }}
    >
      {opened &&
        (replacing ? (
          <ReplaceForm onDone={onClose} replacing={replacing} />
        ) : (
          <TemplateForm onDone={onClose} replacing={null} initialYaml="" />
        ))}
    </Modal>
  );
}

/** A replacement starts from the current YAML. */
function ReplaceForm({ onDone, replacing }: { onDone: () => void; replacing: ScanTemplate }) {
  const tenant = useTenant();
  const current = useQuery(templateQuery(tenant.id, replacing.id));
  if (current.isPending) return <LoadingState label="Loading the template…" />;
  if (!current.data)
    return (
      <ErrorState error={current.error} title="Could not load the template" onRetry={() => void current.refetch()} />
    );
  return (
    <TemplateForm
      onDone={onDone}
      replacing={replacing}
      initialYaml={current.data.template.yaml}
      storedFiles={current.data.template.payloadFiles.map((f) => f.path)}
    />
  );
}

function TemplateForm({
  onDone,
  replacing,
  initialYaml,
  storedFiles = [],
}: {
  onDone: () => void;
  replacing: ScanTemplate | null;
  initialYaml: string;
  storedFiles?: string[];
}) {
  const tenant = useTenant();
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [yaml, setYaml] = useState(initialYaml);
  const [emptyError, setEmptyError] = useState<string | null>(null);
  const [payloads, setPayloads] = useState<File[]>([]);
  const [payloadError, setPayloadError] = useState<string | null>(null);

  const save = useMutation({
    mutationFn: async (text: string) => {
      // No files picked on a replacement: the stored ones stay.
      let files: PayloadFiles | undefined;
      if (payloads.length || !replacing) {
        files = {};
        for (const f of payloads) files[payloadPathFor(text, f.name)] = await f.text();
      }
      return replacing ? replaceTemplate(tenant.id, replacing.id, text, files) : createTemplate(tenant.id, text, files);
    },
    onSuccess: async ({ template }) => {
      notifySuccess(replacing ? `Replaced “${template.templateId}”.` : `Uploaded “${template.templateId}”.`);
      await queryClient.invalidateQueries({ queryKey: templateKeys.all(tenant.id) });
      onDone();
    },
  });
  const issues = templateIssues(save.error);

  async function pick(f: File | null) {
    setFile(f);
    setFileError(null);
    if (!f) return;
    if (!/\.ya?ml$/i.test(f.name)) return setFileError('Choose a .yaml or .yml file.');
    if (f.size > MAX_BYTES)
      return setFileError(`The file is ${Math.ceil(f.size / 1024)} KiB; templates may be at most 64 KiB.`);
    setYaml(await f.text());
    setEmptyError(null);
    save.reset();
  }

  function pickPayloads(fs: File[]) {
    setPayloads(fs);
    setPayloadError(null);
    save.reset();
    if (fs.length > MAX_PAYLOAD_FILES) return setPayloadError(`At most ${MAX_PAYLOAD_FILES} payload files.`);
    if (fs.reduce((n, f) => n + f.size, 0) > MAX_PAYLOAD_BYTES)
      return setPayloadError('Payload files of a template take at most 512 KiB together.');
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!yaml.trim()) return setEmptyError('Choose a file or paste a template.');
    if (payloadError) return;
    save.mutate(yaml);
  }

  return (
    <form
      noValidate
      onSubmit={submit}
      aria-label={replacing ? `Replace template ${replacing.templateId}` : 'Upload template'}
    >
      <Stack gap="md">
        {replacing && (
          <Text size="sm" c="dimmed">
            The new YAML must keep the id <Code>{replacing.templateId}</Code>. Scans queued from now on use it.
          </Text>
        )}
        <FileInput
          label="Template file"
          description=".yaml or .yml, up to 64 KiB; its text appears below"
          accept=".yaml,.yml,application/yaml,text/yaml"
          clearable
          clearButtonProps={{ 'aria-label': 'Clear the chosen file' }}
          value={file}
          error={fileError}
          onChange={(f) => void pick(f)}
          name="file"
        />
        <Textarea
          label="Template YAML"
          description="Or paste it here: a nuclei HTTP template (id, info with name and severity, http requests with matchers); anything the scanner cannot run is named below."
          withAsterisk
          autosize
          minRows={10}
          maxRows={24}
          spellCheck={false}
          value={yaml}
          error={emptyError}
          onChange={(e) => {
            setYaml(e.currentTarget.value);
            setEmptyError(null);
          }}
          styles={{
            input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 'var(--mantine-font-size-xs)' },
          }}
        />
        <FileInput
          label="Payload files"
          description={
            replacing && storedFiles.length
              ? `Stored: ${storedFiles.join(', ')}. Pick files to replace them all; pick none to keep them.`
              : 'The word lists the template names in payloads (one value a line), up to 20 files and 512 KiB'
          }
          multiple
          clearable
          clearButtonProps={{ 'aria-label': 'Clear the payload files' }}
          value={payloads}
          error={payloadError}
          onChange={pickPayloads}
          name="payloadFiles"
        />
        {issues ? (
          <Alert
            color="red"
            variant="light"
            title={issues.length === 1 ? 'The template has a problem' : `The template has ${issues.length} problems`}
            role="alert"
          >
            <List size="sm" spacing={4} aria-label="Template problems">
              {issues.map((i) => (
                <List.Item key={`${i.path}:${i.message}`}>
                  <Code>{templatePlace(i.path)}</Code> {i.message}
                </List.Item>
              ))}
            </List>
          </Alert>
        ) : (
          <ErrorAlert error={save.error} title={replacing ? 'Template not replaced' : 'Template not uploaded'} />
        )}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {replacing ? 'Replace template' : 'Upload template'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
