// A growing text area with a character limit: says "At most N characters." at the field once the
// text is longer, so a form shows the limit where the text is typed (the LLM helper forms).
import { Textarea, type TextareaProps } from '@mantine/core';

export function LimitedTextarea({
  value,
  onValueChange,
  max,
  ...props
}: Omit<TextareaProps, 'value' | 'onChange' | 'error'> & {
  value: string;
  onValueChange: (v: string) => void;
  max: number;
}) {
  return (
    <Textarea
      autosize
      {...props}
      value={value}
      onChange={(e) => onValueChange(e.currentTarget.value)}
      error={value.length > max ? `At most ${max.toLocaleString('en-US')} characters.` : null}
    />
  );
}
