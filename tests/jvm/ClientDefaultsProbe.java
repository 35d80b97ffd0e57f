import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;

/**
 * Prints, as one JSON object, what a kafka-clients jar on the class path really does:
 * its version, the ConfigDef defaults of the producer, consumer and admin client, and
 * whether a producer built from each argument (key=value pairs joined by '&') ends up
 * idempotent ("on"), not idempotent ("off") or refuses the configuration ("error").
 * Used by tests/test_rules_defaults.py; prints facts only, judges nothing.
 */
public final class ClientDefaultsProbe {
    private ClientDefaultsProbe() { }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder("{");
        out.append(quote("version")).append(':').append(quote(version())).append(',');
        out.append(quote("producer")).append(':').append(defaults("org.apache.kafka.clients.producer.ProducerConfig"));
        out.append(',').append(quote("consumer")).append(':')
            .append(defaults("org.apache.kafka.clients.consumer.ConsumerConfig"));
        out.append(',').append(quote("admin")).append(':')
            .append(defaults("org.apache.kafka.clients.admin.AdminClientConfig"));
        out.append(',').append(quote("idempotence")).append(":{");
        for (int i = 0; i < args.length; i++) {
            out.append(i == 0 ? "" : ",").append(quote(args[i])).append(':').append(quote(idempotence(args[i])));
        }
        out.append("}}");
        System.out.println(out);
    }

    private static String version() throws Exception {
        Class<?> info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
        return (String) info.getMethod("getVersion").invoke(null);
    }

    private static ConfigDef configDef(String className) throws Exception {
        Class<?> cls = Class.forName(className);
        try {
            Method method = cls.getDeclaredMethod("configDef");
            method.setAccessible(true);
            return (ConfigDef) method.invoke(null);
        } catch (NoSuchMethodException e) {
            Field field = cls.getDeclaredField("CONFIG");
            field.setAccessible(true);
            return (ConfigDef) field.get(null);
        }
    }

    private static String defaults(String className) throws Exception {
        ConfigDef def = configDef(className);
        Map<String, Object> sorted = new TreeMap<>();
        for (ConfigDef.ConfigKey key : def.configKeys().values()) {
            sorted.put(key.name, key.hasDefault() ? key.defaultValue : ConfigDef.NO_DEFAULT_VALUE);
        }
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Object> e : sorted.entrySet()) {
            if (e.getValue() == ConfigDef.NO_DEFAULT_VALUE) {
                continue;
            }
            out.append(first ? "" : ",").append(quote(e.getKey())).append(':').append(text(e.getValue()));
            first = false;
        }
        return out.append('}').toString();
    }

    private static String text(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Password) {
            return quote(((Password) value).value());
        }
        if (value instanceof Class) {
            return quote(((Class<?>) value).getName());
        }
        if (value instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object item : (List<?>) value) {
                parts.add(item instanceof Class ? ((Class<?>) item).getName() : String.valueOf(item));
            }
            return quote(String.join(",", parts));
        }
        return quote(String.valueOf(value));
    }

    private static String idempotence(String spec) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", "localhost:9092");
        props.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        for (String pair : spec.split("&")) {
            if (!pair.isEmpty()) {
                String[] kv = pair.split("=", 2);
                props.put(kv[0], kv[1]);
            }
        }
        Class<?> cls = Class.forName("org.apache.kafka.clients.producer.ProducerConfig");
        Object config;
        try {
            config = cls.getConstructor(Properties.class).newInstance(props);
        } catch (java.lang.reflect.InvocationTargetException e) {
            return "error";
        }
        try {
            Method enabled = cls.getDeclaredMethod("idempotenceEnabled");
            enabled.setAccessible(true);
            return (Boolean) enabled.invoke(config) ? "on" : "off";
        } catch (NoSuchMethodException e) {
            Method get = cls.getMethod("getBoolean", String.class);
            return (Boolean) get.invoke(config, "enable.idempotence") ? "on" : "off";
        } catch (java.lang.reflect.InvocationTargetException e) {
            return "error";
        }
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
