// A streamed language-model answer: the text (Markdown, rendered safely) as it arrives, a Stop button while it streams, the
// source label ("offline analysis" or "model answer"), and friendly errors (busy with the wait,
// credits exhausted, timeouts). Reusable by any page that streams an answer (result-file
// explainer, CMMC evidence review, mesh "ask operations").
//
// Usage:
//   const answer = useStreamedAnswer();
//   answer.start((handlers, signal) => explainResultFile(tenantId, file, handlers, signal));
//   <StreamedAnswer answer={answer} title="Explanation" />
//
// useStreamedAnswer(opts?)
//   opts.onDone(result)  called once an answer completed (e.g. refresh a history list)
//   returns { status, text, meta, error, fallbackReason, start(run), stop(), reset() }
//     fallbackReason: set when the offline analysis stands in for the model: its answer cited
//     evidence that does not exist, or it failed before its first word (busy with the wait,
//     credits exhausted, timeout); the component says so
//     status: 'idle' | 'waiting' (sent, no text yet) | 'streaming' | 'done' | 'stopped' | 'error'
//
// <StreamedAnswer> props
//   answer       the hook's value (required)
//   title        heading above the text (default "Answer")
//   headingLevel 2, 3 or 4 (default 3)
//   emptyText    what to show while idle (default nothing)
//   onRetry      shows "Try again" next to an error
import { Alert, Badge, Button, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { MarkdownText } from './MarkdownText.tsx';
import { llmErrorMessage, type StreamHandlers, type StreamMeta, type StreamResult } from '../lib/llm-api.ts';

export type StreamStatus = 'idle' | 'waiting' | 'streaming' | 'done' | 'stopped' | 'error';

export interface StreamedAnswerState {
  status: StreamStatus;
  text: string;
  meta: StreamMeta | null;
  error: unknown;
  /** Why the offline analysis replaced the model's answer, when it did. */
  fallbackReason: string | null;
  /** Starts a new answer (stopping any running one). `run` is e.g. explainResultFile bound to its inputs. */
  start: (run: (handlers: StreamHandlers, signal: AbortSignal) => Promise<StreamResult>) => void;
  /** The stop button: closes the connection, which aborts the model call on the server. */
  stop: () => void;
  reset: () => void;
}

export function useStreamedAnswer(opts: { onDone?: (result: StreamResult) => void } = {}): StreamedAnswerState {
  const [status, setStatus] = useState<StreamStatus>('idle');
  const [text, setText] = useState('');
  const [meta, setMeta] = useState<StreamMeta | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [fallbackReason, setFallbackReason] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);
  const onDone = useRef(opts.onDone);
  onDone.current = opts.onDone;

  useEffect(() => () => controller.current?.abort(), []);

  const start = useCallback<StreamedAnswerState['start']>((run) => {
    controller.current?.abort();
    const ac = new AbortController();
    controller.current = ac;
    setStatus('waiting');
    setText('');
    setMeta(null);
    setError(null);
    setFallbackReason(null);
    run(
      {
        onMeta: (m) => {
          if (ac.signal.aborted) return;
          setMeta(m);
          // The model failed before its first word (busy, credits, timeout): the offline analysis answers.
          if (m.fallbackReason) setFallbackReason(m.fallbackReason);
        },
        onDelta: (_piece, all) => {
          if (ac.signal.aborted) return;
          setText(all);
          setStatus('streaming');
        },
        onFallback: (f, m) => {
          if (ac.signal.aborted) return;
          setText(f.text);
          setMeta(m);
          setFallbackReason(f.reason);
        },
      },
      ac.signal,
    ).then(
      (result) => {
        if (controller.current !== ac) return;
        setText(result.text);
        setStatus('done');
        onDone.current?.(result);
      },
      (e: unknown) => {
        if (controller.current !== ac) return;
        if (ac.signal.aborted) setStatus('stopped');
        else {
          setError(e);
          setStatus('error');
        }
      },
    );
  }, []);

  const stop = useCallback(() => {
    controller.current?.abort();
  }, []);

  const reset = useCallback(() => {
    controller.current?.abort();
    controller.current = null;
    setStatus('idle');
    setText('');
    setMeta(null);
    setError(null);
    setFallbackReason(null);
  }, []);

  return { status, text, meta, error, fallbackReason, start, stop, reset };
}

const STATUS_TEXT: Record<StreamStatus, string> = {
  idle: '',
  waiting: 'Waiting for the answer…',
  streaming: 'Answering…',
  done: 'Answer complete.',
  stopped: 'Stopped.',
  error: 'The answer failed.',
};

export interface StreamedAnswerProps {
  answer: StreamedAnswerState;
  title?: string;
  headingLevel?: 2 | 3 | 4;
  emptyText?: string;
  onRetry?: () => void;
}

export function StreamedAnswer({
  answer,
  title = 'Answer',
  headingLevel = 3,
  emptyText,
  onRetry,
}: StreamedAnswerProps) {
  const { status, text, meta, error, fallbackReason, stop } = answer;
  const running = status === 'waiting' || status === 'streaming';
  if (status === 'idle' && !emptyText) return null;
  return (
    <Paper withBorder radius="md" p="md" aria-busy={running}>
      <Stack gap="sm">
        <Group justify="space-between" align="center">
          <Group gap="xs">
            <Title order={headingLevel} size="h5">
              {title}
            </Title>
            {meta && (
              <Badge variant="light" color={meta.source === 'offline' ? 'gray' : 'blue'} data-testid="answer-source">
                {/* The label ("offline analysis", "model answer"); only the staff mesh ask names its model. */}
                {meta.source === 'model' && meta.model ? `model: ${meta.model}` : meta.label}
              </Badge>
            )}
          </Group>
          {running && (
            <Button size="xs" color="red" variant="light" onClick={stop}>
              Stop
            </Button>
          )}
        </Group>
        {status === 'idle' ? (
          <Text c="dimmed" size="sm">
            {emptyText}
          </Text>
        ) : (
          <>
            {status === 'waiting' && (
              <Group gap="xs">
                <Loader size="xs" aria-hidden="true" />
                <Text size="sm" c="dimmed">
                  Waiting for the answer…
                </Text>
              </Group>
            )}
            {fallbackReason && (
              <Alert color="yellow" variant="light" title="Showing the offline analysis">
                <Group justify="space-between" align="center">
                  <Text size="sm">{fallbackReason} The offline analysis below is based only on the data.</Text>
                  {/* A busy or slow model may answer later; exhausted credits will not come back by retrying. */}
                  {onRetry &&
                    !running &&
                    meta?.fallbackError &&
                    meta.fallbackError.error !== 'llm_credits_exhausted' && (
                      <Button size="xs" variant="default" onClick={onRetry}>
                        Try again
                      </Button>
                    )}
                </Group>
              </Alert>
            )}
            {text && <MarkdownText text={text} testId="streamed-answer" />}
            {status === 'stopped' && (
              <Text size="sm" c="dimmed">
                Stopped. The answer above is incomplete and was not saved.
              </Text>
            )}
            {status === 'error' && (
              <Alert color="red" variant="light" role="alert" title="No answer">
                <Group justify="space-between" align="center">
                  <Text size="sm">{llmErrorMessage(error)}</Text>
                  {onRetry && (
                    <Button size="xs" variant="default" onClick={onRetry}>
                      Try again
                    </Button>
                  )}
                </Group>
              </Alert>
            )}
          </>
        )}
        <Text size="xs" c="dimmed" role="status" aria-live="polite">
          {STATUS_TEXT[status]}
        </Text>
      </Stack>
    </Paper>
  );
}
