import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;

/**
 * Prints, as one JSON object, the full ConfigDef of the producer, consumer, admin client and
 * Kafka Streams of the kafka-clients and kafka-streams jars on the class path: per key its
 * type, its default as text (null: a null default; with "required": no default value at all) and whether the ConfigDef marks it internal; and StreamsConfig's *_PREFIX constants
 * (the prefixes under which Streams passes configs to its clients). Internal and deprecated keys are
 * included: a client prints and accepts them. A development tool for
 * udfs/rules/generate_keysets.py; prints facts only, judges nothing.
 */
public final class ConfigDefProbe {
    private static final String[][] ROLES = {
        {"producer", "org.apache.kafka.clients.producer.ProducerConfig"},
        {"consumer", "org.apache.kafka.clients.consumer.ConsumerConfig"},
        {"admin", "org.apache.kafka.clients.admin.AdminClientConfig"},
        {"streams", "org.apache.kafka.streams.StreamsConfig"},
    };

    private ConfigDefProbe() { }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder("{");
        out.append(quote("version")).append(':').append(quote(version())).append(',');
        out.append(quote("roles")).append(":{");
        for (int i = 0; i < ROLES.length; i++) {
            out.append(i == 0 ? "" : ",").append(quote(ROLES[i][0])).append(':').append(keys(ROLES[i][1]));
        }
        out.append("},").append(quote("streams_prefixes")).append(":{");
        boolean first = true;
        for (Field field : Class.forName(ROLES[3][1]).getFields()) {
            if (field.getName().endsWith("_PREFIX") && field.getType() == String.class) {
                out.append(first ? "" : ",").append(quote(field.getName())).append(':')
                    .append(quote((String) field.get(null)));
                first = false;
            }
        }
        System.out.println(out.append("}}"));
    }

    private static String version() throws Exception {
        Class<?> info;
        try {
            info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
        } catch (ClassNotFoundException e) { // 4.4 moved it
            info = Class.forName("org.apache.kafka.common.utils.internals.AppInfoParser");
        }
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

    private static boolean internal(ConfigDef.ConfigKey key) {
        try {
            Field field = ConfigDef.ConfigKey.class.getDeclaredField("internalConfig");
            field.setAccessible(true);
            return field.getBoolean(key);
        } catch (ReflectiveOperationException e) {
            return false; // releases before the flag existed
        }
    }

    private static String keys(String className) throws Exception {
        ConfigDef def;
        try {
            def = configDef(className);
        } catch (ClassNotFoundException e) {
            return "{}"; // a release without that client (the admin client came in 0.11)
        }
        Map<String, ConfigDef.ConfigKey> sorted = new TreeMap<>(def.configKeys());
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (ConfigDef.ConfigKey key : sorted.values()) {
            out.append(first ? "" : ",").append(quote(key.name)).append(":{");
            out.append(quote("type")).append(':').append(quote(key.type.name()));
            if (key.hasDefault()) {
                out.append(',').append(quote("default")).append(':').append(text(key.defaultValue));
            } else {
                out.append(',').append(quote("default")).append(":null,").append(quote("required")).append(":true");
            }
            if (internal(key)) {
                out.append(',').append(quote("internal")).append(":true");
            }
            out.append('}');
            first = false;
        }
        return out.append('}').toString();
    }

    private static String text(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Password) {
            return "null"; // a password default is never written out
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
