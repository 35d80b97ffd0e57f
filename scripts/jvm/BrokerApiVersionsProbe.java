import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * Prints, as one JSON object, the request versions a KRaft broker of the kafka-clients release on the
 * class path serves: per API key of the BROKER listener, its name, the oldest version (the message
 * definition's validVersions minimum), the newest stable version (unstable last versions are off on a
 * default broker) and the deprecated range, if any. APIs with no stable version are left out, as the
 * broker leaves them out of its ApiVersions answer. Used by udfs/upgrade/generate.py; facts only.
 */
public final class BrokerApiVersionsProbe {
    private BrokerApiVersionsProbe() { }

    public static void main(String[] args) throws Exception {
        Map<Integer, String> apis = new TreeMap<>();
        for (ApiKeys key : ApiKeys.apisForListener(ApiMessageType.ListenerType.BROKER)) {
            short oldest = key.oldestVersion();
            short newest = key.latestVersion(false);
            if (newest < oldest) {
                continue;
            }
            ApiMessageType type = key.messageType;
            StringBuilder api = new StringBuilder("{");
            api.append(quote("name")).append(':').append(quote(key.name)).append(',');
            api.append(quote("min")).append(':').append(oldest).append(',');
            api.append(quote("max")).append(':').append(newest);
            short lowDeprecated = type.lowestDeprecatedVersion();
            short highDeprecated = type.highestDeprecatedVersion();
            if (lowDeprecated >= 0 && highDeprecated >= lowDeprecated) {
                api.append(',').append(quote("deprecated")).append(":[").append(lowDeprecated).append(',')
                    .append(highDeprecated).append(']');
            }
            apis.put((int) key.id, api.append('}').toString());
        }
        StringBuilder out = new StringBuilder("{");
        out.append(quote("version")).append(':').append(quote(version())).append(',');
        out.append(quote("apis")).append(":{");
        boolean first = true;
        for (Map.Entry<Integer, String> api : apis.entrySet()) {
            out.append(first ? "" : ",").append(quote(api.getKey().toString())).append(':').append(api.getValue());
            first = false;
        }
        System.out.println(out.append("}}"));
    }

    private static String version() throws Exception {
        Class<?> info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
        return (String) info.getMethod("getVersion").invoke(null);
    }

    private static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
