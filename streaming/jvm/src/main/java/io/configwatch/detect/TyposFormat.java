package io.configwatch.detect;

import java.util.Map;

/**
 * Python's {@code str.format(**fields)} for templates of plain named fields (a name in braces, with
 * doubled braces for braces); a conversion or format spec is refused.
 */
final class TyposFormat {
  private TyposFormat() {}

  static String format(String template, Map<String, Object> fields) {
    StringBuilder out = new StringBuilder(template.length() + 64);
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      if (c == '{' && i + 1 < template.length() && template.charAt(i + 1) == '{') {
        out.append('{');
        i += 2;
      } else if (c == '}' && i + 1 < template.length() && template.charAt(i + 1) == '}') {
        out.append('}');
        i += 2;
      } else if (c == '{') {
        int end = template.indexOf('}', i);
        String name = end < 0 ? "" : template.substring(i + 1, end);
        if (end < 0 || !fields.containsKey(name)) {
          throw new IllegalArgumentException("unsupported or unknown field in template: " + template);
        }
        out.append(fields.get(name));
        i = end + 1;
      } else if (c == '}') {
        throw new IllegalArgumentException("single '}' in template: " + template);
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }
}
